package runner

import (
	"errors"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// ErrAPIUnavailable: the API server did not answer after the executors'
// own retries. The run stops as saved (nothing is rolled back for it: an
// outage says nothing about the upgrade) and `apply` resumes it.
var ErrAPIUnavailable = errors.New("the API server is unavailable")

// apiUnavailable tells errors that mean the API server could not be
// reached or was overloaded, as opposed to an answer that refuses.
func apiUnavailable(err error) bool {
	var ne net.Error
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || errors.As(err, &ne)
}
