package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// ended tells a run that stopped for good or until an operator acts
// (failed, aborted, a failed rollback): no process moves it on by
// itself, so what lasts only as long as the run (a freeze) must not stay.
func ended(p v1alpha1.RunPhase) bool {
	switch p {
	case v1alpha1.RunPending, v1alpha1.RunRunning, v1alpha1.RunRollingBack:
		return false
	}
	return true
}

// finisher is one step's step.Finisher and where it is.
type finisher struct {
	stage, index int
	name         string
	f            step.Finisher
}

// finishers are the step.Finishers of every step of the plan, whatever
// their progress: finishing one that never ran costs a NotFound.
func (a *actor) finishers(r *v1alpha1.UpgradeRun) ([]finisher, error) {
	var out []finisher
	for i, st := range a.plan.Plan.Spec.Stages {
		for j, s := range st.Steps {
			// Only kinds with a Finisher are built: the others may need
			// sources that an abort of a run without them cannot read.
			f, err := steps.NewFinisher(a.input(r, i, j), a.deps)
			if err != nil {
				return nil, err
			}
			if f != nil {
				out = append(out, finisher{stage: i, index: j, name: s.Name, f: f})
			}
		}
	}
	return out, nil
}

// finish undoes, before the run is saved as ended, what its steps do
// only for the run's lifetime (step.Finisher: lifts its freezes). Every
// finisher is tried; their errors are joined.
func (a *actor) finish(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	fs, err := a.finishers(r)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range fs {
		if err := f.f.Finish(ctx); err != nil {
			errs = append(errs, fmt.Errorf("step %s: %w", f.name, err))
		}
	}
	return errors.Join(errs...)
}

// reinstate runs again each succeeded step whose change lasts only for
// the run (a freeze), when a run goes on after it ended and finish undid
// it (a retry, an abort resumed). On a run's first drive, or after a
// crash, nothing was undone and running the step again changes nothing.
// notice hears each step run again.
func (a *actor) reinstate(ctx context.Context, r *v1alpha1.UpgradeRun, notice func(string)) error {
	if r.Status.Phase != v1alpha1.RunRunning {
		return nil // rolling back: the stages' restores remove them
	}
	fs, err := a.finishers(r)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if r.Status.Stages[f.stage].Steps[f.index].Phase != v1alpha1.PhaseSucceeded {
			continue
		}
		ex, err := a.executor(r, f.stage, f.index)
		if err != nil {
			return err
		}
		res, err := ex.Run(ctx)
		if err != nil {
			return fmt.Errorf("step %s, run again as its run goes on: %w", f.name, err)
		}
		if res.Status != step.Succeeded {
			return fmt.Errorf("step %s, run again as its run goes on: %s", f.name, res.Message)
		}
		notice(fmt.Sprintf("step %s again: %s", f.name, res.Message))
	}
	return nil
}
