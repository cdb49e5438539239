package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// ErrSiblingFailed is the cause given to steps cancelled because another
// step of their graph stage failed.
var ErrSiblingFailed = errors.New("another step of the stage failed")

// landed is an action's result coming back from its goroutine.
type landed struct {
	a   Action
	o   Outcome
	err error
}

// Drive moves the run until it is Done or an error stops it. The run is
// saved after every transition. Actions run one at a time, except the
// steps of a graph stage, which run side by side as their dependencies
// allow; the run itself is only touched here, on one goroutine, and each
// action gets a copy to read.
func (d *Driver) Drive(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	inflight := map[Action]context.CancelCauseFunc{}
	results := make(chan landed)
	var stopped error // set: no new actions; wait for the flight to land
	stopAll := func(cause error) {
		if stopped == nil {
			stopped = cause
		}
		for _, cancel := range inflight {
			cancel(cause)
		}
	}
	for {
		if stopped == nil {
			if err := d.launch(ctx, r, inflight, results); err != nil {
				stopAll(err)
			}
		}
		if len(inflight) == 0 {
			if stopped != nil {
				return stopped
			}
			if Next(r).Kind == Done {
				return nil
			}
			// Nothing runs and nothing may start: a graph whose
			// remaining steps wait on steps that will not succeed.
			return fmt.Errorf("run %s: no step of stage %s can start (check dependsOn)", r.Name, r.Status.Stages[Next(r).Stage].Name)
		}
		l := <-results
		inflight[l.a](nil)
		delete(inflight, l.a)
		switch {
		case l.err != nil && errors.Is(l.err, ErrSiblingFailed):
			Cancel(r, l.a, d.Now())
			if err := d.Saver.Save(ctx, r); err != nil {
				stopAll(err)
				continue
			}
			d.observe(Event{Action: l.a, Outcome: Outcome{Message: "cancelled"}, Run: r})
			continue
		case l.err != nil:
			stopAll(l.err)
			continue
		case stopped != nil:
			continue // draining after an error: record nothing more
		}
		Complete(r, l.a, l.o, d.Now())
		if err := d.Saver.Save(ctx, r); err != nil {
			stopAll(err)
			continue
		}
		d.observe(Event{Action: l.a, Outcome: l.o, Run: r})
		if r.Status.Phase != v1alpha1.RunRunning {
			// The stage failed: stop its other steps before the rollback.
			for _, cancel := range inflight {
				cancel(ErrSiblingFailed)
			}
		}
	}
}

// launch begins every action that may start now and is not in flight.
func (d *Driver) launch(ctx context.Context, r *v1alpha1.UpgradeRun, inflight map[Action]context.CancelCauseFunc, results chan<- landed) error {
	for _, a := range NextActions(r) {
		if a.Kind == Done {
			return nil
		}
		if _, busy := inflight[a]; busy {
			continue
		}
		if len(inflight) > 0 && (a.Kind != RunStep || r.Status.Phase != v1alpha1.RunRunning) {
			return nil // only a graph stage's steps run side by side
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		Begin(r, a, d.Now())
		if err := d.Saver.Save(ctx, r); err != nil {
			return err
		}
		d.observe(Event{Action: a, Begin: true, Run: r})
		actx, cancel := context.WithCancelCause(ctx)
		inflight[a] = cancel
		view := snapshot(r)
		go func() {
			o, err := d.Actor.Act(actx, view, a)
			results <- landed{a: a, o: o, err: err}
		}()
	}
	return nil
}

// snapshot copies the run for an action to read while the driver goes on
// recording other actions.
func snapshot(r *v1alpha1.UpgradeRun) *v1alpha1.UpgradeRun {
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("copy run %s: %v", r.Name, err)) // plain structs: cannot fail
	}
	var cp v1alpha1.UpgradeRun
	if err := json.Unmarshal(b, &cp); err != nil {
		panic(fmt.Sprintf("copy run %s: %v", r.Name, err))
	}
	return &cp
}

func (d *Driver) observe(e Event) {
	if d.Observe != nil {
		d.Observe(e)
	}
}
