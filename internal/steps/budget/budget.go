// Package budget spends a step's timeout across its calls and waits, and
// turns the expected ways a step ends badly (an object failing, the time
// running out) into Failed results rather than errors.
//
// Applies and reads run under Context, which ends at the deadline; waits
// get Left as their own timeout instead, so that a wait that runs out of
// time still reports the last thing it saw ("timed out after 2m:
// deployment demo/web: Updated: 1/3").
package budget

import (
	"context"
	"errors"
	"time"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// ErrExceeded is the cause of Context once the step's time is spent.
var ErrExceeded = errors.New("step timeout exceeded")

// Budget is one run of a step against its timeout.
type Budget struct {
	timeout  time.Duration
	deadline time.Time
	ctx      context.Context
	cancel   context.CancelFunc
}

// Start starts the clock. Stop releases the context.
func Start(ctx context.Context, timeout time.Duration) *Budget {
	deadline := time.Now().Add(timeout)
	c, cancel := context.WithDeadlineCause(ctx, deadline, ErrExceeded)
	return &Budget{timeout: timeout, deadline: deadline, ctx: c, cancel: cancel}
}

// Stop releases the budget's context.
func (b *Budget) Stop() { b.cancel() }

// Context is for calls other than waits: it ends at the deadline.
func (b *Budget) Context() context.Context { return b.ctx }

// Left is the timeout for the next wait: what remains, at least a
// millisecond (a zero timeout would mean none).
func (b *Budget) Left() time.Duration {
	return max(time.Until(b.deadline), time.Millisecond)
}

// Verdict turns what went wrong into the step's answer. A wait that found
// the object failing, or ran out of time, and a call cut by the deadline,
// are Failed results carrying the message; anything else (the caller's
// context ending, a malformed object, missing RBAC) stays an error.
func (b *Budget) Verdict(err error) (step.Result, error) {
	var nre *kube.NotReadyError
	switch {
	case errors.As(err, &nre) && errors.Is(nre.Reason, kube.ErrTimeout):
		// Report the step's timeout, not the remainder the wait was given.
		timedOut := *nre
		timedOut.Timeout = b.timeout
		return step.Failure("%s", timedOut.Error()), nil
	case errors.As(err, &nre):
		return step.Failure("%s", nre.Error()), nil
	case b.ctx.Err() != nil && errors.Is(context.Cause(b.ctx), ErrExceeded):
		timedOut := kube.NotReadyError{Reason: kube.ErrTimeout, Health: kube.Health{Message: err.Error()}, Timeout: b.timeout}
		return step.Failure("%s", timedOut.Error()), nil
	}
	return step.Result{}, err
}
