package runner

import (
	"context"
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// Resume drives an unfinished run on from the plan and sources saved with
// it, so no plan file is needed: what `upgrade --to` does with a hop it
// finds unfinished (after a crash, or waiting at an approval), whose plan
// a catalog might no longer render the same. A finished run is nothing to
// resume: it is reported as apply reports it (already done, or rolled
// back). A run an operator aborted is resumed only on retry; otherwise
// the error wraps ErrAbortedRun and nothing changes.
func (s *Session) Resume(ctx context.Context, name string, retry bool) (*Result, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	run, err := s.store.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	saved, err := s.store.LoadSources(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("read the plan and sources saved with run %s: %w", name, err)
	}
	p, err := resolve.FromSources(&v1alpha1.UpgradePlan{ObjectMeta: engine.PlanMeta(run), Spec: saved.Plan}, saved.Sources)
	if err != nil {
		return nil, fmt.Errorf("the sources saved with run %s: %w", name, err)
	}
	return s.apply(ctx, p, applyMode{retry: retry, abortHolds: true})
}
