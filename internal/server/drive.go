package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// leaseWait is how often a drive looks again at a lease another driver
// holds.
const leaseWait = 5 * time.Second

// driveOn runs a phase's drive until it ends on its own, and records the
// end. Two endings are not the phase's: the server stopping (the run is
// saved where it stood; the next server drives on) and another driver
// holding the cluster's lease (a second server driving the same state, a
// CLI): then it waits and drives again, rather than call the phase
// failed and throw the other driver's result away.
func (s *Server) driveOn(what string, run func() (wizard.State, Status, error), record func(wizard.State, Status)) {
	defer s.windows.set(what, nil)
	for {
		to, st, err := run()
		var ww *runner.WindowWait
		switch {
		case s.ctx.Err() != nil && interrupted(err):
			return
		case errors.As(err, &ww) && !ww.Next.IsZero():
			// Outside the plan's windows: a state of the phase (its
			// status says until when), not its failure.
			s.windows.set(what, ww)
			s.cfg.Log(fmt.Sprintf("%s waits for a maintenance window: %s", what, strings.TrimPrefix(ww.Error(), "waiting: ")))
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(windowRecheck(time.Until(ww.Next))):
			}
			s.windows.set(what, nil) // the run goes on, or says again what it waits for
			continue
		case errors.Is(err, lease.ErrHeld):
			s.cfg.Log(fmt.Sprintf("another driver holds the cluster's lease: %s waits for it", what))
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(leaseWait):
			}
			continue
		}
		record(to, st)
		return
	}
}

// windowRecheck is how long a drive waiting for a window sleeps: until
// it opens, looking again at least every 5 minutes (the stages'
// estimates and the clock may have moved).
func windowRecheck(untilOpen time.Duration) time.Duration {
	return min(max(untilOpen, time.Second), 5*time.Minute)
}

// windowWaits are the window each phase's drive waits for (by the
// drive's name), for its status to say.
type windowWaits struct {
	mu sync.Mutex
	m  map[string]*runner.WindowWait
}

func (w *windowWaits) set(what string, ww *runner.WindowWait) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*runner.WindowWait{}
	}
	if ww == nil {
		delete(w.m, what)
		return
	}
	w.m[what] = ww
}

func (w *windowWaits) get(what string) *runner.WindowWait {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[what]
}

// interrupted says a drive stopped because its context ended, not
// because of the upgrade.
func interrupted(err error) bool {
	return err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, runner.ErrInterrupted) || errors.Is(err, runner.ErrLeaseLost))
}

// failedRun is the phase's run to retry: the first planned one that
// exists and did not succeed, with its attempt; nil when none.
func (s *Server) failedRun(planned []PlannedRun) *RetryOf {
	for _, p := range planned {
		r := s.runs.get(s.cfg.Session.Namespace, p.Run)
		if r != nil && r.Status.Phase != v1alpha1.RunSucceeded {
			return &RetryOf{Run: p.Run, Attempt: r.Status.Attempt}
		}
	}
	return nil
}

// retryStill says the retry asked for is still to do: its run is still
// at the attempt that failed. After the retry's attempt started (and a
// server restarted before recording its end), it is not done again.
func (s *Server) retryStill(r *RetryOf) bool {
	if r == nil {
		return false
	}
	run := s.runs.get(s.cfg.Session.Namespace, r.Run)
	return run != nil && run.Status.Attempt == r.Attempt && run.Status.Phase != v1alpha1.RunSucceeded
}
