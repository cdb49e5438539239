package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// KillAfterTransitionEnv is a test-only failpoint: the process SIGKILLs
// itself right after saving the transition with this number, so tests can
// prove a run resumes from every point.
const KillAfterTransitionEnv = "UPSHIFT_TEST_KILL_AFTER_TRANSITION"

// KillDuringBackupEnv is a test-only failpoint: the process SIGKILLs
// itself right after writing the first chunk of the named stage's backup,
// before the backup is verified and recorded.
const KillDuringBackupEnv = "UPSHIFT_TEST_KILL_DURING_BACKUP"

// SlowSavesEnv is a test-only failpoint: a duration every save of the
// record waits before it is sent, so tests can kill a step that started
// while the save recording its stage's backup was in flight.
const SlowSavesEnv = "UPSHIFT_TEST_SLOW_SAVES"

// slowSave waits as SlowSavesEnv says (not at all when unset).
func slowSave() {
	if d, err := time.ParseDuration(os.Getenv(SlowSavesEnv)); err == nil {
		time.Sleep(d)
	}
}

// backupFailpoint returns the hook for KillDuringBackupEnv, or nil.
func backupFailpoint() func(backup.Key, int) {
	stage := os.Getenv(KillDuringBackupEnv)
	if stage == "" {
		return nil
	}
	return func(k backup.Key, _ int) {
		if k.Stage == stage {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}

// saver saves the run while the lease is held. It writes with the lease's
// context: once the lease is lost, no write goes out.
type saver struct {
	store    *runstore.Store
	leaseCtx context.Context
	// last is the transition this process saved last.
	last int
	// onAbort is called when the saved run carries an abort request from
	// another process.
	onAbort func()
	// beforeEnd undoes what lasts only for the run (its freezes) before
	// the run is saved as ended: killed in between, the run resumes and
	// ends again, so an ended run never leaves it behind.
	beforeEnd func(ctx context.Context, r *v1alpha1.UpgradeRun) error
}

var _ engine.Saver = (*saver)(nil)

func newSaver(store *runstore.Store, leaseCtx context.Context, r *v1alpha1.UpgradeRun, onAbort func()) *saver {
	return &saver{store: store, leaseCtx: leaseCtx, last: r.Status.Transitions, onAbort: onAbort}
}

// Save ignores the caller's context on purpose: an interrupted run still
// records the outcome of the action that just finished, as long as the
// lease is held.
func (s *saver) Save(_ context.Context, r *v1alpha1.UpgradeRun) error {
	if err := s.leaseCtx.Err(); err != nil {
		return fmt.Errorf("not saving run %s: %w", r.Name, context.Cause(s.leaseCtx))
	}
	if s.beforeEnd != nil && ended(r.Status.Phase) {
		if err := s.beforeEnd(s.leaseCtx, r); err != nil {
			return fmt.Errorf("run %s not saved as %s: %w; apply resumes it and ends it again", r.Name, r.Status.Phase, err)
		}
	}
	slowSave()
	err := s.store.Save(s.leaseCtx, r)
	if errors.Is(err, runstore.ErrConflict) {
		// Only `upshift abort` and `upshift approve` write a run they do
		// not hold the lease for: take what they wrote and save again.
		cur, gerr := s.store.Get(s.leaseCtx, r.Name)
		if gerr != nil {
			return fmt.Errorf("save run %s: %w (and re-read: %v)", r.Name, err, gerr)
		}
		// Anything more than the flag means another process moved the
		// run on (this one was paused past its lease): stop, never
		// overwrite its progress.
		if cur.Status.Transitions != s.last {
			return fmt.Errorf("%w: run %s was moved on by another process (saved transition %d, this process last saved %d)", ErrLeaseLost, r.Name, cur.Status.Transitions, s.last)
		}
		r.ResourceVersion = cur.ResourceVersion
		// Approvals are the other thing written without the lease.
		if len(cur.Status.Approvals) > len(r.Status.Approvals) {
			r.Status.Approvals = cur.Status.Approvals
		}
		// The request is for a moving run only: copied onto the run's
		// last save (Aborted, Failed…) it would outlive its attempt and
		// abort the resumed one the moment it polls.
		if cur.Status.AbortRequested && !ended(r.Status.Phase) {
			r.Status.AbortRequested = true
			if s.onAbort != nil {
				s.onAbort()
			}
		}
		err = s.store.Save(s.leaseCtx, r)
	}
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.Name, err)
	}
	s.last = r.Status.Transitions
	failpoint(r)
	return nil
}

// failpoint SIGKILLs the process right after the save that holds the
// transition named by KillAfterTransitionEnv (the engine saves a
// transition together with those that follow it before any IO, so that
// save may hold a later one too). Every save of a transition calls it.
func failpoint(r *v1alpha1.UpgradeRun) {
	v := os.Getenv(KillAfterTransitionEnv)
	if v == "" {
		return
	}
	if n, err := strconv.Atoi(v); err == nil && r.Status.Transitions >= n {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
