package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Retry calls call until it succeeds, again(err) says no, the backoff is
// spent or ctx ends. call gets the attempt number from 1, so it can tell
// that an earlier attempt may have landed although its answer was lost.
// Which errors are worth another try is the caller's to say: again.
//
// The backoff is spent as wait.ExponentialBackoff spends it: after b.Steps
// calls, or sooner when the next step would pass b.Cap. Spent, or stopped
// by again, Retry returns the last error as it is, so a caller can still
// tell NotFound or Conflict. When ctx ends while Retry waits, the error
// matches both context.Cause(ctx) and ctx.Err() and names the last error,
// unless the last error is already ctx's own (again retried it).
func Retry(ctx context.Context, b wait.Backoff, again func(error) bool, call func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err := call(attempt)
		if err == nil || !again(err) || b.Steps <= 1 {
			return err
		}
		pause := b.Step()
		if b.Steps < 1 { // the cap was reached: the backoff ends here
			return err
		}
		select {
		case <-ctx.Done():
			if errors.Is(err, ctx.Err()) { // the call already says ctx ended
				return err
			}
			return &cutOff{cause: context.Cause(ctx), ctxErr: ctx.Err(), last: err}
		case <-time.After(pause):
		}
	}
}

// cutOff ends a Retry whose ctx ended: it reads as the cause and the last
// error, and matches the cause and ctx.Err() alike, so callers testing
// either (context.Canceled, a lease's loss) still see it.
type cutOff struct{ cause, ctxErr, last error }

func (e *cutOff) Error() string   { return fmt.Sprintf("%v (last error: %v)", e.cause, e.last) }
func (e *cutOff) Unwrap() []error { return []error{e.cause, e.ctxErr} }
