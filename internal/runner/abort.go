package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// Abort stops a running or waiting run where it is: backups stay and a
// rollback is still possible. When another process drives the run, Abort
// asks it to stop (the one write made without the lease: a flag the holder
// reads) and waits until it has.
func (s *Session) Abort(ctx context.Context, name string) (*Result, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	if _, err := s.store.Get(ctx, name); err != nil {
		return nil, err
	}
	if id, valid, err := lease.Holder(ctx, s.cs, s.opts.Namespace, lease.DefaultName); err == nil && valid && id.Run == name {
		s.opts.Notice(fmt.Sprintf("run %s is driven by %s; asking it to stop", name, id))
		return s.requestAbort(ctx, name)
	}
	held, err := s.acquire(ctx, name, false)
	var heldBy *lease.HeldError
	if errors.As(err, &heldBy) && heldBy.Holder.Run == name {
		// A driver (the controller's next reconcile) took the run up
		// while this one waited for the lease: ask it, as above.
		s.opts.Notice(fmt.Sprintf("run %s is driven by %s; asking it to stop", name, heldBy.Holder))
		return s.requestAbort(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	defer held.Release()
	run, err := s.store.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := engine.Abort(run, "an operator", time.Now()); err != nil {
		return &Result{Run: run}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	// No process drives the run: lift its freezes here, before it is
	// saved as aborted. Only names are needed, which the record's
	// redacted plan keeps.
	a := &actor{plan: &resolve.Plan{Plan: &v1alpha1.UpgradePlan{ObjectMeta: engine.PlanMeta(run), Spec: run.Spec.Plan}}, deps: s.deps, runs: s.runs()}
	if err := a.finish(held.Context(), run); err != nil {
		return &Result{Run: run}, fmt.Errorf("run %s not aborted: %w", name, err)
	}
	if err := s.store.Save(held.Context(), run); err != nil {
		return nil, err
	}
	return &Result{Run: run, Stopped: ErrAborted}, nil
}

func (s *Session) requestAbort(ctx context.Context, name string) (*Result, error) {
	for {
		run, err := s.store.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		if ended(run.Status.Phase) {
			// It stopped meanwhile: a flag on it would abort its next
			// resume, not this drive.
			if run.Status.Phase == v1alpha1.RunAborted {
				return &Result{Run: run, Stopped: ErrAborted}, nil
			}
			return &Result{Run: run}, fmt.Errorf("%w: run %s is %s, not running", ErrRefused, name, run.Status.Phase)
		}
		run.Status.AbortRequested = true
		err = s.store.Save(ctx, run)
		if errors.Is(err, runstore.ErrConflict) {
			select { // the holder saved meanwhile: read again
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	// The run's changes wake the wait at once (one watch: the holder
	// hears the request as fast); the lease is looked at every
	// LeaseRenew, and the run read then too when the watch is not there.
	changed, stop := s.watchRun(ctx, name)
	defer stop()
	deadline := time.Now().Add(2*s.opts.LeaseDuration + 30*time.Second)
	tick := time.NewTicker(s.opts.LeaseRenew)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		run, err := s.store.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		if run.Status.Phase == v1alpha1.RunAborted {
			return &Result{Run: run, Stopped: ErrAborted}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
			continue
		case <-tick.C:
		}
		if _, valid, err := lease.Holder(ctx, s.cs, s.opts.Namespace, lease.DefaultName); err == nil && !valid {
			// The holder went away without seeing the request: abort here.
			return s.Abort(ctx, name)
		}
	}
	return nil, fmt.Errorf("run %s did not stop within %s after the abort request; it stays requested", name, 2*s.opts.LeaseDuration+30*time.Second)
}
