package runstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upshift-dev/upshift/internal/kube"
)

// backoff spaces the retries of a transient error: about 6s in all, enough
// for an API server blip.
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
// or ctx ends. call gets the attempt number (from 1), so it can tell that
// an earlier attempt may have landed although its answer was lost.
func retry(ctx context.Context, call func(attempt int) error) error {
	b := backoff
	for attempt := 1; ; attempt++ {
		err := call(attempt)
		if err == nil || !retriable(err) || attempt >= b.Steps {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(b.Step()):
		}
	}
}
