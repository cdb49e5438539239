// Package wait is the approval and pause steps: they change nothing in
// the cluster and wait on the run record, where approvals land and where
// a pause's first start is saved. The driver hands them what they read
// (Approvals, the step's saved start), so this package needs no store.
package wait

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultPoll is how often an approval is looked for when Waits say not.
const DefaultPoll = 2 * time.Second

// Step is an approval or a pause.
type Step struct {
	spec    v1alpha1.Step
	started time.Time // the step's first start, from the run record
	opts    step.Waits
}

var _ step.Executor = (*Step)(nil)

// New builds the step. started is its first start as saved (zero before
// it started).
func New(spec v1alpha1.Step, started time.Time, opts step.Waits) (*Step, error) {
	if spec.Approval == nil && spec.Pause == nil {
		return nil, fmt.Errorf("step %q is neither an approval nor a pause", spec.Name)
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	return &Step{spec: spec, started: started, opts: opts}, nil
}

func (w *Step) Targets(context.Context) ([]step.Ref, error) { return nil, nil }

func (w *Step) Run(ctx context.Context) (step.Result, error) {
	if w.spec.Pause != nil {
		return w.pause(ctx)
	}
	return w.approval(ctx)
}

// pause lasts until its first start plus the duration: a resumed pause
// goes on from where it was, it does not start over. It holds no
// goroutine meanwhile: it says it is still running and is asked again
// when it ends.
func (w *Step) pause(ctx context.Context) (step.Result, error) {
	d := w.spec.Pause.Duration.Duration
	until := time.Now().Add(d)
	if !w.started.IsZero() {
		until = w.started.Add(d)
	}
	left := time.Until(until)
	if left <= 0 {
		return step.Success("paused %s", d), nil
	}
	if w.opts.NoWait {
		return step.Result{}, fmt.Errorf("%w: paused until %s", step.ErrWaiting, until.UTC().Format(time.RFC3339))
	}
	return step.Progress(left, "paused until %s", until.UTC().Format(time.RFC3339)), nil
}

// approval waits until the run record holds an approval of this step.
func (w *Step) approval(ctx context.Context) (step.Result, error) {
	if w.opts.Approvals == nil {
		// A preview or a listing of targets builds the step without the
		// run record; only a run reads approvals.
		return step.Result{}, fmt.Errorf("approval step %s: no run record to read approvals from", w.spec.Name)
	}
	t := time.NewTicker(w.opts.Poll)
	defer t.Stop()
	await := w.opts.Await
	for {
		a, err := w.opts.Approvals(ctx, w.spec.Name)
		if err != nil && ctx.Err() == nil {
			return step.Result{}, fmt.Errorf("read the approvals of step %s: %w", w.spec.Name, err)
		}
		if err == nil && a != nil {
			return approved(a), nil
		}
		if w.opts.NoWait {
			return step.Result{}, fmt.Errorf("%w: for approval of step %s", step.ErrWaiting, w.spec.Name)
		}
		if await != nil {
			a, err := await(ctx, w.spec.Name)
			switch {
			case err == nil && a != nil:
				return approved(a), nil
			case ctx.Err() != nil:
				return step.Result{}, context.Cause(ctx)
			case errors.Is(err, step.ErrCannotAwait):
				await = nil // read every Poll instead
				continue
			case err != nil:
				return step.Result{}, fmt.Errorf("wait for the approval of step %s: %w", w.spec.Name, err)
			}
		}
		select {
		case <-ctx.Done():
			return step.Result{}, context.Cause(ctx)
		case <-t.C:
		}
	}
}

func approved(a *v1alpha1.Approval) step.Result {
	return step.Success("approved by %s at %s", a.By, a.At.UTC().Format(time.RFC3339))
}
