package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// records is what apply needs of the run store; *runstore.Store is the
// real one, and the decisions below are unit-tested with a small fake.
type records interface {
	Get(ctx context.Context, name string) (*v1alpha1.UpgradeRun, error)
	List(ctx context.Context) ([]v1alpha1.UpgradeRun, error)
	Save(ctx context.Context, r *v1alpha1.UpgradeRun) error
	SavePackedSources(ctx context.Context, name string, p *runstore.PackedSources) (v1alpha1.BlobRef, error)
}

var _ records = (*runstore.Store)(nil)

// prepare reads the runs saved on the cluster, decides what apply does
// with this plan (engine.DecideApply) and records the start of what it
// decided. drive tells whether the run is to be driven on; a refusal is
// an error wrapping ErrRefused, and nothing is written for it.
//
// check runs the plan's health checks (spec.checks) when a run starts or
// starts over, before anything is written; nil checks nothing.
func prepare(ctx context.Context, store records, p *Resolved, retry bool, notice func(string), check func(context.Context) ([]v1alpha1.StepStatus, error)) (out *Outcome, drive bool, err error) {
	existing, err := store.Get(ctx, p.Plan.Name)
	if errors.Is(err, runstore.ErrNotFound) {
		existing, err = nil, nil
	}
	if err != nil {
		return nil, false, err
	}
	all, err := store.List(ctx)
	if err != nil {
		return nil, false, err
	}
	var others []v1alpha1.UpgradeRun
	for _, r := range all {
		if r.Name != p.Plan.Name {
			others = append(others, r)
		}
	}
	dec := engine.DecideApply(existing, others, p.Digest, p.SourceDigests, retry)
	out = &Outcome{Run: existing, Decision: dec}
	switch dec.Verdict {
	case engine.Refuse:
		return out, false, fmt.Errorf("%w: %s", ErrRefused, dec.Reason)
	case engine.AlreadyDone, engine.ReportFailed:
		return out, false, nil
	}
	var checked []v1alpha1.StepStatus
	if starts := dec.Verdict == engine.StartRun || dec.Verdict == engine.StartAttempt; starts && check != nil {
		if checked, err = check(ctx); err != nil {
			return out, false, err
		}
	}
	switch dec.Verdict {
	case engine.StartRun:
		// The plan as written and its sources first, written once into
		// Secrets of their own: the record, saved on every transition and
		// readable by anyone who may read runs, then holds the plan
		// redacted, the digests and the status, and a run never exists
		// without what resumes it.
		// Packed while preflight waited on the API server (packAhead),
		// written only now that the checks passed: a refused plan writes
		// nothing.
		packed, err := p.packedSources()
		if err != nil {
			return nil, false, fmt.Errorf("save the plan's sources: %w; nothing was changed", err)
		}
		ref, err := store.SavePackedSources(ctx, p.Plan.Name, packed)
		if err != nil {
			return nil, false, fmt.Errorf("save the plan's sources: %w; nothing was changed", err)
		}
		run := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
		run.Spec.Sources = &ref
		run.Status.Checks = checked
		// What the run starts from, for its report: written once, with
		// the spec.
		run.Spec.FromVersion = p.From
		if run.Spec.FromVersion == "" {
			run.Spec.FromVersion = engine.FromVersion(others)
		}
		if err := store.Save(ctx, run); err != nil {
			return nil, false, err
		}
		failpoint(run)
		out.Run = run
	case engine.StartAttempt:
		existing.Spec.Plan = p.Plan.Spec // as written; the record's is redacted
		if err := engine.NewAttempt(existing, time.Now()); err != nil {
			return nil, false, err
		}
		existing.Status.Checks = checked
		if err := store.Save(ctx, existing); err != nil {
			return nil, false, err
		}
		failpoint(existing)
	case engine.ResumeRun:
		// The same digests: the plan as written is the one the run
		// started with (the record holds it redacted).
		existing.Spec.Plan = p.Plan.Spec
		if existing.Status.Attempt == 0 {
			// Created, but stopped before its status was first written:
			// it never started. Start it now.
			existing.Status = engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now()).Status
			if err := store.Save(ctx, existing); err != nil {
				return nil, false, err
			}
			failpoint(existing)
			break
		}
		notice(dec.Reason)
		engine.Resume(existing)
	}
	return out, true, nil
}
