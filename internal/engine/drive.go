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
// Before a saved run is driven, its caller reconciles it with the
// backups found in the cluster (Sought, Reconcile; see the package doc).
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
	Action Action
	Begin  bool // false: the action completed with Outcome
	// Progress: a step said it is still running (Outcome.Again), with a
	// new message; it is asked again after Outcome.Again.
	Progress bool
	Outcome  Outcome
	Run      *v1alpha1.UpgradeRun
}

// Driver runs the decide-act-record loop. It holds no state of its own
// besides its collaborators, so any process can drive any saved run.
type Driver struct {
	Actor   Actor
	Saver   Saver
	Now     func() time.Time
	Observe func(Event) // optional; called after each saved transition
	// QuickWindow is how long a gate's or a backup's start may wait
	// unsaved for it to end (zero: 200 ms; see quickWindow).
	QuickWindow time.Duration
	// Hold, when set, is asked before a stage first begins (its backup):
	// an error keeps the stage from beginning and stops the drive with
	// it, nothing recorded (a maintenance window that is closed).
	Hold func(r *v1alpha1.UpgradeRun, stage int) error
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

// Drive moves the run until it is Done or an error stops it. What may
// start before its Begin is saved is the package doc's rule; everything
// else starts once it is. A finished action's outcome is saved with the
// Begin of the action it lets start, or alone when nothing starts.
// Actions run one at a time, except the steps of a graph stage, which run
// side by side as their dependencies allow; the run itself is only
// touched here, on one goroutine, and each action gets a copy to read.
func (d *Driver) Drive(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	f := &flight{d: d, r: r, inflight: map[Action]context.CancelCauseFunc{}, results: make(chan landed), rec: &recorder{observing: d.Observe != nil},
		again: again{timers: map[Action]*time.Timer{}, due: make(chan Action), done: make(chan struct{})}}
	defer close(f.again.done)
	for {
		var begun []begunAction
		if f.stopped == nil {
			var err error
			if begun, err = d.begin(ctx, r, f.inflight, f.rec); err != nil {
				f.stop(err)
			}
		}
		// What may start before its Begin is saved (package doc).
		quiet := readOnly(begun) && !f.rec.lossy
		early := quiet || backedUp(r, begun, f.rec) && !f.rec.lossy
		if early {
			for _, b := range begun {
				d.start(r, b, f.results)
			}
		}
		// A gate or a backup is mostly quicker than a save: wait a
		// moment for it and save both transitions in one write.
		if quiet && f.stopped == nil {
			if l, ok := f.rec.awaitQuick(f.results, d.quickWindow()); ok {
				f.land(l)
				continue
			}
		}
		if err := d.flush(ctx, r, f.rec); err != nil {
			if !early {
				for _, b := range begun { // never started: nothing to wait for
					b.cancel(err)
					delete(f.inflight, b.a)
				}
			}
			begun = nil
			f.stop(err)
		}
		if !early {
			for _, b := range begun {
				d.start(r, b, f.results)
			}
		}
		if len(f.inflight) == 0 {
			if f.stopped != nil {
				return f.stopped
			}
			if Next(r).Kind == Done {
				return nil
			}
			// Nothing runs and nothing may start: a graph whose
			// remaining steps wait on steps that will not succeed.
			return fmt.Errorf("run %s: no step of stage %s can start (check dependsOn)", r.Name, r.Status.Stages[Next(r).Stage].Name)
		}
		var interrupted <-chan struct{} // a step waiting to be asked again has no goroutine to hear it
		if f.stopped == nil {
			interrupted = ctx.Done()
		}
		select {
		case l := <-f.results:
			f.land(l)
		case a := <-f.again.due:
			f.askAgain(ctx, a)
		case <-interrupted:
			f.stop(context.Cause(ctx))
		}
	}
}

// flight is one Drive's actions in flight and what it recorded of them.
type flight struct {
	d        *Driver
	r        *v1alpha1.UpgradeRun
	inflight map[Action]context.CancelCauseFunc
	results  chan landed
	rec      *recorder
	stopped  error // set: no new actions; wait for the flight to land
	again    again // steps still running, to be asked again
}

// stop starts no new action and cancels those in flight.
func (f *flight) stop(cause error) {
	if f.stopped == nil {
		f.stopped = cause
	}
	f.dropWaiting(nil)
	for _, cancel := range f.inflight {
		cancel(cause)
	}
}

// land records what a finished action tells.
func (f *flight) land(l landed) {
	if l.err == nil && l.o.Again > 0 && l.a.Kind == RunStep && f.stopped == nil {
		if f.r.Status.Phase == v1alpha1.RunRunning {
			f.wait(l)
			return
		}
		l.err = ErrSiblingFailed // its stage failed meanwhile: asked no more
	}
	f.inflight[l.a](nil)
	delete(f.inflight, l.a)
	r, now := f.r, f.d.Now
	switch {
	case l.err != nil && errors.Is(l.err, ErrSiblingFailed):
		f.rec.record(r, func() { Cancel(r, l.a, now()) }, Event{Action: l.a, Outcome: Outcome{Message: "cancelled"}})
		return
	case l.err != nil:
		f.stop(l.err)
		return
	case f.stopped != nil:
		return // draining after an error: record nothing more
	}
	f.rec.record(r, func() { Complete(r, l.a, l.o, now()) }, Event{Action: l.a, Outcome: l.o})
	if r.Status.Phase != v1alpha1.RunRunning {
		// The stage failed: stop its other steps before the rollback.
		f.dropWaiting(ErrSiblingFailed)
		for _, cancel := range f.inflight {
			cancel(ErrSiblingFailed)
		}
	}
}

// begunAction is an action whose Begin is recorded, to start once saved.
type begunAction struct {
	a      Action
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// begin records the Begin of every action that may start now and is not
// in flight; none of them starts until the caller has saved the run.
func (d *Driver) begin(ctx context.Context, r *v1alpha1.UpgradeRun, inflight map[Action]context.CancelCauseFunc, rec *recorder) ([]begunAction, error) {
	var begun []begunAction
	for _, a := range NextActions(r) {
		if a.Kind == Done {
			return begun, nil
		}
		if _, busy := inflight[a]; busy {
			continue
		}
		if len(inflight) > 0 && (a.Kind != RunStep || r.Status.Phase != v1alpha1.RunRunning) {
			return begun, nil // only a graph stage's steps run side by side
		}
		if err := ctx.Err(); err != nil {
			return begun, err
		}
		if a.Kind == Backup && d.Hold != nil && r.Status.Phase == v1alpha1.RunRunning && r.Status.Stages[a.Stage].Phase == v1alpha1.PhasePending {
			if err := d.Hold(r, a.Stage); err != nil {
				return begun, err
			}
		}
		rec.record(r, func() { Begin(r, a, d.Now()) }, Event{Action: a, Begin: true})
		actx, cancel := context.WithCancelCause(ctx)
		inflight[a] = cancel
		begun = append(begun, begunAction{a: a, ctx: actx, cancel: cancel})
	}
	return begun, nil
}

// readOnly tells whether every begun action is a backup or a gate:
// actions that leave the platform as it is, so they may start before
// their Begin is saved, and mostly land before a save would.
func readOnly(begun []begunAction) bool {
	for _, b := range begun {
		if b.a.Kind != Backup && b.a.Kind != CheckGate {
			return false
		}
	}
	return len(begun) > 0
}

// backedUp tells whether every begun action is a step of a running
// stage whose backup is recorded in this very batch, not yet saved: a
// resumed run that finds that backup learns that these steps may have
// started (Reconcile). A later step of the stage starts once its Begin is
// saved, since nothing else would tell a resumed run it had.
func backedUp(r *v1alpha1.UpgradeRun, begun []begunAction, rec *recorder) bool {
	for _, b := range begun {
		if b.a.Kind != RunStep || r.Status.Phase != v1alpha1.RunRunning || r.Status.Stages[b.a.Stage].Backup == nil || !rec.backedUp(b.a.Stage) {
			return false
		}
	}
	return len(begun) > 0
}

// start runs a begun action on its own goroutine with a copy of the run.
func (d *Driver) start(r *v1alpha1.UpgradeRun, b begunAction, results chan<- landed) {
	view := snapshot(r)
	go func() {
		o, err := d.Actor.Act(b.ctx, view, b.a)
		results <- landed{a: b.a, o: o, err: err}
	}()
}

// flush saves the transitions recorded since the last save, if any, then
// tells the observer about each. Nothing recorded is told before it is
// saved.
func (d *Driver) flush(ctx context.Context, r *v1alpha1.UpgradeRun, rec *recorder) error {
	if len(rec.events) == 0 {
		return nil
	}
	events := rec.events
	rec.events, rec.lossy = nil, false
	if err := d.Saver.Save(ctx, r); err != nil {
		return err
	}
	for _, e := range events {
		d.observe(e)
	}
	return nil
}

// recorder holds the transitions made since the last save, as the events
// to tell once it is done. Each event shows the run as that transition
// left it: when another transition follows before the save, the earlier
// event gets a copy.
type recorder struct {
	observing bool
	events    []Event
	since     time.Time // when the first of events was recorded
	// lossy: an outcome among events failed or warned. A resumed run
	// that finds the next stage's backup records the stages before it
	// as succeeded (Reconcile), so nothing starts before such an
	// outcome is saved.
	lossy bool
}

// quickWindow is how long transitions may wait unsaved for a gate or a
// backup to land, so one write carries both. One that lands within it is
// never later for it (its outcome would have waited for that save
// anyway); one that lands just after it can wait for the save the window
// put off, up to one save's time. Meanwhile observers see the
// transitions late, and a crash redoes that much (package doc).
const quickWindow = 200 * time.Millisecond

func (d *Driver) quickWindow() time.Duration {
	if d.QuickWindow > 0 {
		return d.QuickWindow
	}
	return quickWindow
}

// awaitQuick waits for an action to land until the oldest unsaved
// transition is window old.
func (c *recorder) awaitQuick(results <-chan landed, window time.Duration) (landed, bool) {
	left := window - time.Since(c.since)
	if left <= 0 {
		return landed{}, false
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case l := <-results:
		return l, true
	case <-t.C:
		return landed{}, false
	}
}

// backedUp tells whether the backup of stage is among the unsaved
// transitions.
func (c *recorder) backedUp(stage int) bool {
	for _, e := range c.events {
		if !e.Begin && e.Action.Kind == Backup && e.Action.Stage == stage && e.Outcome.OK {
			return true
		}
	}
	return false
}

func (c *recorder) record(r *v1alpha1.UpgradeRun, transition func(), e Event) {
	if len(c.events) == 0 {
		c.since = time.Now()
	}
	if n := len(c.events); c.observing && n > 0 && c.events[n-1].Run == r {
		c.events[n-1].Run = snapshot(r)
	}
	transition()
	e.Run = r
	c.events = append(c.events, e)
	c.lossy = c.lossy || !e.Begin && !e.Progress && !e.Outcome.OK
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
