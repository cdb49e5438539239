package engine

import (
	"context"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Actor does the IO of an action: a backup, a step, a gate, a restore. An
// expected failure is an Outcome with OK false; an error means the action
// could not be finished here (interrupted, lease lost, unreachable API
// after retries) and the run must stop as it was saved, to resume later.
type Actor interface {
	Act(ctx context.Context, r *v1alpha1.UpgradeRun, a Action) (Outcome, error)
}

// Saver persists the run after each transition. An error stops the drive:
// the run must not go on unless its progress is saved.
type Saver interface {
	Save(ctx context.Context, r *v1alpha1.UpgradeRun) error
}

// Event tells an observer about a saved transition.
type Event struct {
	Action  Action
	Begin   bool // false: the action completed with Outcome
	Outcome Outcome
	Run     *v1alpha1.UpgradeRun
}

// Driver runs the decide-act-record loop. It holds no state of its own
// besides its collaborators, so any process can drive any saved run.
type Driver struct {
	Actor   Actor
	Saver   Saver
	Now     func() time.Time
	Observe func(Event) // optional; called after each saved transition
}

// Drive moves the run until Next says Done or an error stops it. The run
// is saved after every transition.
func (d *Driver) Drive(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	for {
		a := Next(r)
		if a.Kind == Done {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		Begin(r, a, d.Now())
		if err := d.Saver.Save(ctx, r); err != nil {
			return err
		}
		d.observe(Event{Action: a, Begin: true, Run: r})
		o, err := d.Actor.Act(ctx, r, a)
		if err != nil {
			return err
		}
		Complete(r, a, o, d.Now())
		if err := d.Saver.Save(ctx, r); err != nil {
			return err
		}
		d.observe(Event{Action: a, Outcome: o, Run: r})
	}
}

func (d *Driver) observe(e Event) {
	if d.Observe != nil {
		d.Observe(e)
	}
}
