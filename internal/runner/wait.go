package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/step"
)

// ErrWaiting: the run waits for an approval or a pause and the caller
// asked not to wait (apply --no-wait). apply resumes it later.
var ErrWaiting = errors.New("waiting")

// waitStep is an approval or a pause. It changes nothing in the cluster,
// so it has no targets; it reads the run record, where approvals land and
// where the pause's first start is saved.
type waitStep struct {
	spec   v1alpha1.Step
	run    string
	status func() *v1alpha1.StepStatus // the step's saved status
	store  *runstore.Store
	poll   time.Duration
	noWait bool
}

var _ step.Executor = (*waitStep)(nil)

func (w *waitStep) Targets(context.Context) ([]step.Ref, error) { return nil, nil }

func (w *waitStep) Run(ctx context.Context) (step.Result, error) {
	if w.spec.Pause != nil {
		return w.pause(ctx)
	}
	return w.approval(ctx)
}

// pause waits until its first start plus the duration: a resumed pause
// goes on from where it was, it does not start over.
func (w *waitStep) pause(ctx context.Context) (step.Result, error) {
	d := w.spec.Pause.Duration.Duration
	until := time.Now().Add(d)
	if st := w.status(); st != nil && st.StartedAt != nil {
		until = st.StartedAt.Add(d)
	}
	left := time.Until(until)
	if left <= 0 {
		return step.Success("paused %s", d), nil
	}
	if w.noWait {
		return step.Result{}, fmt.Errorf("%w: paused until %s", ErrWaiting, until.UTC().Format(time.RFC3339))
	}
	select {
	case <-ctx.Done():
		return step.Result{}, context.Cause(ctx)
	case <-time.After(left):
		return step.Success("paused %s", d), nil
	}
}

// approval waits until the run record holds an approval of this step.
func (w *waitStep) approval(ctx context.Context) (step.Result, error) {
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		r, err := w.store.Get(ctx, w.run)
		if err != nil && ctx.Err() == nil {
			return step.Result{}, fmt.Errorf("read approvals of run %s: %w", w.run, err)
		}
		if err == nil {
			if a, ok := engine.Approved(r, w.spec.Name); ok {
				return step.Success("approved by %s at %s", a.By, a.At.UTC().Format(time.RFC3339)), nil
			}
		}
		if w.noWait {
			return step.Result{}, fmt.Errorf("%w: for approval of step %s", ErrWaiting, w.spec.Name)
		}
		select {
		case <-ctx.Done():
			return step.Result{}, context.Cause(ctx)
		case <-t.C:
		}
	}
}
