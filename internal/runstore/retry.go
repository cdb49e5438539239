package runstore

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upshift-dev/upshift/internal/kube"
)

// backoff spaces the retries of a transient error. kube.Retry ends it
// where the next step would pass Cap: four tries, about 1.4s in all.
var backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6, Cap: 3 * time.Second}

// retriable tells errors that a retry may cure. Conflicts and missing
// objects are answers, not blips: they go back to the caller at once.
func retriable(err error) bool {
	return kube.Transient(err) &&
		!apierrors.IsConflict(err) &&
		!apierrors.IsAlreadyExists(err) &&
		!apierrors.IsNotFound(err) &&
		!apierrors.IsRequestEntityTooLargeError(err) &&
		!errors.Is(err, context.Canceled) &&
		!errors.Is(err, context.DeadlineExceeded)
}

// retry runs call until it succeeds, fails for good, the backoff is spent
// or ctx ends (see kube.Retry). call gets the attempt number (from 1), so
// it can tell that an earlier attempt may have landed although its answer
// was lost.
func retry(ctx context.Context, call func(attempt int) error) error {
	return kube.Retry(ctx, backoff, retriable, call)
}
