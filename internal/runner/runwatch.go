package runner

// The drive follows its own run record through one watch: for abort
// requests (watchAbort), for approvals (actor.awaitApproval), and the
// abort command for the end of the run it asked to stop (watchRun).

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// watchAbort watches the saved run for an abort request from another
// process while this one drives it: one watch for the whole drive, which
// hears the request at once, where a read every LeaseRenew cost a request
// each time and heard it up to that late. A user who may not watch runs
// is heard by polling.
func (s *Session) watchAbort(ctx context.Context, name string, abort func()) {
	err := followRun(ctx, s.store, name, s.opts.LeaseRenew, func(r *v1alpha1.UpgradeRun) bool {
		if abortRequested(r) {
			abort()
			return false
		}
		return true
	})
	if apierrors.IsForbidden(err) {
		s.pollAbort(ctx, name, abort)
	}
}

// watchRun signals on changed whenever the saved run is seen, at first
// and then on each change, until stop or ctx ends. A watch that may not
// be made signals nothing: the caller reads on a tick of its own too.
func (s *Session) watchRun(ctx context.Context, name string) (changed <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan struct{}, 1)
	go func() {
		_ = followRun(ctx, s.store, name, s.opts.LeaseRenew, func(*v1alpha1.UpgradeRun) bool {
			select {
			case ch <- struct{}{}:
			default: // one wake-up pending is enough
			}
			return true
		})
	}()
	return ch, cancel
}

// followRun calls seen with the saved run as a watch tells it, from its
// state now and then at each change, until seen returns false or ctx
// ends. A watch the server ends is made again, from the last version
// seen (after pause, when it lasted less); one that may not be made
// (forbidden) returns its error.
func followRun(ctx context.Context, store *runstore.Store, name string, pause time.Duration, seen func(*v1alpha1.UpgradeRun) bool) error {
	rv := ""
	for ctx.Err() == nil {
		began := time.Now()
		w, err := store.Watch(ctx, name, rv)
		if apierrors.IsForbidden(err) {
			return err
		}
		if err != nil {
			rv = "" // the version may be what was refused: start from the state
		} else {
			more := true
			if rv, more = follow(w, rv, seen); !more {
				return nil
			}
		}
		// Watch again: at once after a long watch (the server's timeout),
		// after a pause after a short one or a refusal.
		if time.Since(began) < pause {
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
		}
	}
	return ctx.Err()
}

// follow reads w until it ends or seen returns false (more false), and
// returns the last resourceVersion seen: "" when the watch expired, so
// the next one starts from the run's state.
func follow(w watch.Interface, rv string, seen func(*v1alpha1.UpgradeRun) bool) (last string, more bool) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			r, ok := ev.Object.(*v1alpha1.UpgradeRun)
			if !ok {
				continue
			}
			rv = r.ResourceVersion
			if !seen(r) {
				return rv, false
			}
		case watch.Error:
			return "", true
		}
	}
	return rv, true
}

// pollAbort reads the saved run every LeaseRenew for an abort request.
func (s *Session) pollAbort(ctx context.Context, name string, abort func()) {
	t := time.NewTicker(s.opts.LeaseRenew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if r, err := s.store.Get(ctx, name); err == nil && abortRequested(r) {
				abort()
				return
			}
		}
	}
}

// abortRequested tells an abort request to the drive of r. A flag on a
// run saved as ended is not one: it resumes that run, and its first save
// clears it.
func abortRequested(r *v1alpha1.UpgradeRun) bool {
	return r.Status.AbortRequested && !ended(r.Status.Phase)
}
