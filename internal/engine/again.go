package engine

import (
	"context"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A step that says it is still running (Outcome.Again) stays in flight
// with no goroutine of its own: a timer hands it back to the drive, which
// asks it again. Its record stays Running, so a process that dies
// meanwhile resumes it as any step begun and not finished.

// again holds a drive's steps that are waiting to be asked again.
type again struct {
	timers map[Action]*time.Timer
	due    chan Action   // a step whose wait is over
	done   chan struct{} // closed when the drive returns
}

// Progress records how far a step that is still running is: its message.
func Progress(r *v1alpha1.UpgradeRun, a Action, o Outcome) {
	r.Status.Transitions++
	r.Status.Stages[a.Stage].Steps[a.Index].Message = o.Message
}

// wait records a still running step's progress, when its message
// changed, and asks it again after o.Again.
func (f *flight) wait(l landed) {
	r := f.r
	if st := &r.Status.Stages[l.a.Stage].Steps[l.a.Index]; st.Message != l.o.Message {
		f.rec.record(r, func() { Progress(r, l.a, l.o) }, Event{Action: l.a, Progress: true, Outcome: l.o})
	}
	a, due, done := l.a, f.again.due, f.again.done
	f.again.timers[a] = time.AfterFunc(l.o.Again, func() {
		select {
		case due <- a:
		case <-done:
		}
	})
}

// askAgain starts a waiting step again, with a context of its own.
func (f *flight) askAgain(ctx context.Context, a Action) {
	delete(f.again.timers, a)
	cancel, ok := f.inflight[a]
	if !ok || f.stopped != nil {
		return
	}
	cancel(nil)
	actx, cancel := context.WithCancelCause(ctx)
	f.inflight[a] = cancel
	f.d.start(f.r, begunAction{a: a, ctx: actx, cancel: cancel}, f.results)
}

// dropWaiting takes the waiting steps out of the flight: recorded as
// cancelled when a sibling failed (ErrSiblingFailed), left as saved
// (Running, resumed later) when the drive stops (cause nil).
func (f *flight) dropWaiting(cause error) {
	for a, t := range f.again.timers {
		t.Stop()
		delete(f.again.timers, a)
		f.inflight[a](cause)
		delete(f.inflight, a)
		if cause == ErrSiblingFailed {
			r, now := f.r, f.d.Now
			f.rec.record(r, func() { Cancel(r, a, now()) }, Event{Action: a, Outcome: Outcome{Message: "cancelled"}})
		}
	}
}
