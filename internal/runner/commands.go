package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// Rollback undoes every stage of the run that changed something. It needs
// only the backups, not the plan's sources. A run that later runs were
// built on is refused: undoing it would silently undo them too.
func (s *Session) Rollback(ctx context.Context, name string) (*Result, error) {
	return s.command(ctx, name, false, func(r *v1alpha1.UpgradeRun) error {
		newer, err := s.newerRun(ctx, r)
		if err != nil {
			// Without the list there is no telling whether a later run
			// stands on this one: refuse rather than undo it blindly.
			return fmt.Errorf("cannot tell whether a later run stands on run %s: %w; nothing was changed", r.Name, err)
		}
		if newer != "" {
			return fmt.Errorf("run %s started after %s and is not rolled back: roll back run %s first", newer, r.Name, newer)
		}
		return engine.RequestRollback(r, "rollback requested by "+lease.CurrentIdentity(name).String(), time.Now())
	})
}

// Retry retries the failed step of a run that failed without rollback,
// with the plan's sources as saved with the run.
func (s *Session) Retry(ctx context.Context, name string) (*Result, error) {
	return s.command(ctx, name, true, engine.Retry)
}

// newerRun names a run started after r that is not rolled back, or "".
// A run that never started has nothing a later run could stand on.
func (s *Session) newerRun(ctx context.Context, r *v1alpha1.UpgradeRun) (string, error) {
	if r.Status.StartedAt == nil {
		return "", nil
	}
	runs, err := s.store.List(ctx)
	if err != nil {
		return "", err
	}
	for _, o := range runs {
		if o.Name == r.Name || o.Status.StartedAt == nil || o.Status.Phase == v1alpha1.RunRolledBack {
			continue
		}
		if o.Status.StartedAt.After(r.Status.StartedAt.Time) {
			return o.Name, nil
		}
	}
	return "", nil
}

// command changes a saved run under the lease and drives it on.
func (s *Session) command(ctx context.Context, name string, needSources bool, change func(*v1alpha1.UpgradeRun) error) (*Result, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	held, err := s.acquire(ctx, name, false)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	run, err := s.store.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	engine.FirstAttempt(run, time.Now()) // created, never started: reconcile looks all the same
	if err := s.reconcile(held.Context(), run); err != nil {
		return nil, err
	}
	if err := change(run); err != nil {
		return &Result{Run: run}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	// The plan as written comes with the sources saved with the run: the
	// resource holds it redacted, which must not drive anything.
	var p *resolve.Plan
	saved, err := s.store.LoadSources(ctx, name)
	if err == nil {
		run.Spec.Plan = saved.Plan
		p, err = resolve.FromSources(&v1alpha1.UpgradePlan{ObjectMeta: engine.PlanMeta(run), Spec: saved.Plan}, saved.Sources)
	}
	switch {
	case err != nil && needSources:
		return nil, err
	case err != nil:
		// A rollback restores from backups and needs of the plan only
		// what redaction keeps (stages, step names and kinds, Helm
		// releases); its down-migration Jobs come from the saved
		// sources. Sources that cannot be read do not stop a rollback
		// that needs none, but their cause is kept for the one that
		// does (a stage with a rollbackJob).
		p = &resolve.Plan{Plan: &v1alpha1.UpgradePlan{ObjectMeta: engine.PlanMeta(run), Spec: run.Spec.Plan},
			SourcesErr: fmt.Errorf("read the sources saved with run %s: %w", name, err)}
	case needSources:
		if changed := engine.Changes(run, p.Digest, p.SourceDigests); changed != "" {
			return &Result{Run: run}, fmt.Errorf("%w: the sources saved with run %s do not match it (%s): apply the plan file again to resume", ErrRefused, name, changed)
		}
	}
	if err := s.store.Save(held.Context(), run); err != nil {
		return nil, err
	}
	failpoint(run)
	return s.drive(ctx, held, &Result{Run: run}, p, nil, true)
}
