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
//
// A Backup of a stage attempt whose backup was already taken and verified
// (by a process that stopped before the record of it was saved) must
// answer that backup, not take another: the stage's steps start while
// that record is being saved, so a new one could hold their changes.
type Actor interface {
	Act(ctx context.Context, r *v1alpha1.UpgradeRun, a Action) (Outcome, error)
}

// Saver persists the run after each transition. An error stops the drive:
// the run must not go on unless its progress is saved. Save gets a copy
// of the run, which it may change (its resourceVersion, what it merges
// from the stored run); the driver does not read those changes back, so
// a Saver keeps what it must carry from one save to the next itself.
// Saves come one at a time, in the order of the transitions they hold.
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

// Drive moves the run until it is Done or an error stops it. Every
// transition is saved before anything that follows it changes the
// platform, or is found again on resume. Saves go out one at a time, each
// with every transition recorded since the last, while the driver goes on
// recording: a backup or a gate, which change nothing, starts at once; so
// does a step of a stage whose backup is taken (Actor finds it again) and
// whose backup's Begin is saved (the record shows the stage begun, so a
// rollback covers it); any other action (a restore, a step of a stage with
// Helm releases, whose starting revisions live in the record alone)
// starts once the save holding its Begin has landed. A crash resumes from
// the last save that landed, as a crash a moment earlier would. Actions
// run one at a time, except the steps of a graph stage, which run side by
// side as their dependencies allow; the run itself is only touched here,
// on one goroutine, and each action and save gets a copy.
func (d *Driver) Drive(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	inflight := map[Action]context.CancelCauseFunc{}
	results := make(chan landed)
	rec := &recorder{observing: d.Observe != nil}
	sv := &saving{landed: make(chan saveLanded, 1)}
	var held []begunAction // begun; they start once the save holding their Begin lands
	var stopped error      // set: no new actions; wait for the flight to land
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
			begun, err := d.begin(ctx, r, inflight, rec)
			if err != nil {
				stopAll(err)
			}
			if mayStart(r, sv.saved, begun) {
				for _, b := range begun {
					d.start(r, b, results)
				}
			} else {
				held = append(held, begun...)
			}
		}
		if !sv.busy && !sv.failed && len(rec.events) > 0 {
			d.save(ctx, r, rec, held, sv)
			held = nil
		}
		if sv.failed {
			for _, b := range held { // their Begin is never saved: never started
				b.cancel(stopped)
				delete(inflight, b.a)
			}
			held = nil
		}
		if len(inflight) == 0 && !sv.busy {
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
		select {
		case s := <-sv.landed:
			sv.busy = false
			if s.err != nil {
				// Nothing is saved after a save that failed: the run
				// stays as last saved, for a resume to pick up.
				sv.failed = true
				stopAll(s.err)
			} else {
				sv.saved = s.run
				for _, e := range s.events {
					d.observe(e)
				}
			}
			for _, b := range s.held {
				if stopped != nil { // never started: nothing to wait for
					b.cancel(stopped)
					delete(inflight, b.a)
					continue
				}
				d.start(r, b, results)
			}
			// Actions begun while this save was in flight may not need
			// the next one: a step whose stage this save shows begun.
			if stopped == nil && mayStart(r, sv.saved, held) {
				for _, b := range held {
					d.start(r, b, results)
				}
				held = nil
			}
		case l := <-results:
			inflight[l.a](nil)
			delete(inflight, l.a)
			switch {
			case l.err != nil && errors.Is(l.err, ErrSiblingFailed):
				rec.record(r, func() { Cancel(r, l.a, d.Now()) }, Event{Action: l.a, Outcome: Outcome{Message: "cancelled"}})
				continue
			case l.err != nil:
				stopAll(l.err)
				continue
			case stopped != nil:
				continue // draining after an error: record nothing more
			}
			rec.record(r, func() { Complete(r, l.a, l.o, d.Now()) }, Event{Action: l.a, Outcome: l.o})
			if r.Status.Phase != v1alpha1.RunRunning {
				// The stage failed: stop its other steps before the rollback.
				for _, cancel := range inflight {
					cancel(ErrSiblingFailed)
				}
			}
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
		rec.record(r, func() { Begin(r, a, d.Now()) }, Event{Action: a, Begin: true})
		actx, cancel := context.WithCancelCause(ctx)
		inflight[a] = cancel
		begun = append(begun, begunAction{a: a, ctx: actx, cancel: cancel})
	}
	return begun, nil
}

// mayStart tells whether the begun actions may start before the save
// holding their Begin lands: each leaves the platform as it is (a backup,
// a gate), or each is a step of a running stage whose backup is recorded
// (in memory: its save may be in flight) and holds all a rollback needs,
// and whose backup's Begin is in the last save that landed (saved). A
// Helm release's starting revision is kept in the record alone, not with
// the backup, so a stage with Helm releases waits for that save.
func mayStart(r, saved *v1alpha1.UpgradeRun, begun []begunAction) bool {
	if len(begun) == 0 {
		return false
	}
	readOnly, backedUp := true, true
	for _, b := range begun {
		if b.a.Kind != Backup && b.a.Kind != CheckGate {
			readOnly = false
		}
		if b.a.Kind != RunStep || r.Status.Phase != v1alpha1.RunRunning {
			backedUp = false
			continue
		}
		if ref := r.Status.Stages[b.a.Stage].Backup; ref == nil || len(ref.HelmReleases) > 0 {
			backedUp = false
		}
		if saved == nil || len(saved.Status.Stages) <= b.a.Stage || saved.Status.Stages[b.a.Stage].Phase == v1alpha1.PhasePending {
			backedUp = false
		}
	}
	return readOnly || backedUp
}

// start runs a begun action on its own goroutine with a copy of the run.
func (d *Driver) start(r *v1alpha1.UpgradeRun, b begunAction, results chan<- landed) {
	view := snapshot(r)
	go func() {
		o, err := d.Actor.Act(b.ctx, view, b.a)
		results <- landed{a: b.a, o: o, err: err}
	}()
}

// saving is the save in flight, if any, and the run as last saved.
type saving struct {
	busy   bool
	failed bool
	landed chan saveLanded
	// saved is the run as the last save that landed wrote it (nil until
	// one has).
	saved *v1alpha1.UpgradeRun
}

// saveLanded is a save's end: the copy it wrote, the transitions it
// held (to tell the observer), and the actions waiting for it.
type saveLanded struct {
	run    *v1alpha1.UpgradeRun
	events []Event
	held   []begunAction
	err    error
}

// save starts saving a copy of the run with the transitions recorded
// since the last save; held start once it lands. Nothing recorded is told
// to the observer before it is saved.
func (d *Driver) save(ctx context.Context, r *v1alpha1.UpgradeRun, rec *recorder, held []begunAction, sv *saving) {
	cp := snapshot(r)
	events := rec.events
	rec.events = nil
	if n := len(events); n > 0 && events[n-1].Run == r {
		events[n-1].Run = cp // the observer sees the run as saved
	}
	sv.busy = true
	go func() {
		err := d.Saver.Save(ctx, cp)
		sv.landed <- saveLanded{run: cp, events: events, held: held, err: err}
	}()
}

// recorder holds the transitions made since the last save, as the events
// to tell once it is done. Each event shows the run as that transition
// left it: when another transition follows before the save, the earlier
// event gets a copy.
type recorder struct {
	observing bool
	events    []Event
}

func (c *recorder) record(r *v1alpha1.UpgradeRun, transition func(), e Event) {
	if n := len(c.events); c.observing && n > 0 && c.events[n-1].Run == r {
		c.events[n-1].Run = snapshot(r)
	}
	transition()
	e.Run = r
	c.events = append(c.events, e)
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
