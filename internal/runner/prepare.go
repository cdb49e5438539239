package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// records is what apply needs of the run store; *runstore.Store is the
// real one, and the decisions below are unit-tested with a small fake.
type records interface {
	List(ctx context.Context) ([]v1alpha1.UpgradeRun, error)
	Create(ctx context.Context, r *v1alpha1.UpgradeRun) error
	Save(ctx context.Context, r *v1alpha1.UpgradeRun) error
	SavePackedSources(ctx context.Context, name string, p *runstore.PackedSources) (v1alpha1.BlobRef, error)
}

var _ records = (*runstore.Store)(nil)

// applyMode is what apply may do with a run already saved.
type applyMode struct {
	// retry starts a rolled-back run over (engine.DecideApply).
	retry bool
	// abortHolds: a run an operator aborted is resumed only on retry
	// (Session.Resume). Decided here, on the list read under the lease:
	// a check before it would race an abort landing in between.
	abortHolds bool
}

// prepare reads the runs saved on the cluster, decides what apply does
// with this plan (engine.DecideApply) and records the start of what it
// decided. drive tells whether the run is to be driven on; a refusal is
// an error wrapping ErrRefused, and nothing is written for it.
//
// owner is who drives the run (Options.Owner): a new run records it, and
// a run of the plan's name that another owner started is refused.
//
// check runs the plan's health checks (spec.checks) when a run starts or
// starts over, before anything is written; nil checks nothing.
func prepare(ctx context.Context, store records, p *resolve.Plan, owner *v1alpha1.RunOwner, mode applyMode, notice func(string), check func(context.Context) ([]v1alpha1.StepStatus, error)) (out *Result, drive bool, err error) {
	// One list tells both: the run of this plan, if any, and the others.
	all, err := store.List(ctx)
	if err != nil {
		return nil, false, err
	}
	var (
		existing *v1alpha1.UpgradeRun
		others   []v1alpha1.UpgradeRun
	)
	for i := range all {
		if all[i].Name == p.RunName() {
			existing = &all[i]
		} else {
			others = append(others, all[i])
		}
	}
	if existing != nil && !engine.OwnedBy(existing, owner) {
		return &Result{Decision: engine.Decision{Verdict: engine.Refuse}}, false, fmt.Errorf("%w: run %s belongs to %s, not to %s: it is driven only through its owner (the CLI's retry, rollback and abort act on any run)",
			ErrRefused, existing.Name, existing.Spec.Owner, owner)
	}
	if mode.abortHolds && !mode.retry && existing != nil && existing.Status.Phase == v1alpha1.RunAborted {
		dec := engine.Decision{Verdict: engine.Refuse, Reason: fmt.Sprintf("run %s was aborted by an operator: only a retry resumes it", existing.Name), Run: existing.Name}
		return &Result{Run: existing, Decision: dec}, false, fmt.Errorf("%w: %w: %s", ErrRefused, ErrAbortedRun, dec.Reason)
	}
	dec := engine.DecideApply(existing, others, p.Digest, p.SourceDigests, mode.retry)
	out = &Result{Run: existing, Decision: dec}
	switch dec.Verdict {
	case engine.Refuse:
		return out, false, fmt.Errorf("%w: %s", ErrRefused, dec.Reason)
	case engine.AlreadyDone, engine.ReportFailed:
		return out, false, nil
	}
	// A run created but stopped before its status was first written
	// never started (its status.attempt is 0): it starts now, checks
	// and all, as a new run would (engine.FirstAttempt).
	unstarted := dec.Verdict == engine.ResumeRun && existing.Status.Attempt == 0
	var checked []v1alpha1.StepStatus
	if starts := dec.Verdict == engine.StartRun || dec.Verdict == engine.StartAttempt || unstarted; starts && check != nil {
		if checked, err = check(ctx); err != nil {
			return out, false, err
		}
	}
	switch dec.Verdict {
	case engine.StartRun:
		run, err := startRun(ctx, store, p, owner, checked, others)
		if err != nil {
			return nil, false, err
		}
		out.Run = run
		out.runs = len(all) + 1
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
		if engine.FirstAttempt(existing, time.Now()) {
			existing.Status.Checks = checked
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

// startRun creates the record of a new run of the plan. The plan as
// written and its sources go first, written once into Secrets of their
// own: the record, saved on every transition and readable by anyone who
// may read runs, then holds the plan redacted, the digests and the
// status, and a run never exists without what resumes it. Packed while
// preflight waited on the API server (PackAhead), they are written only
// now that the checks passed: a refused plan writes nothing.
func startRun(ctx context.Context, store records, p *resolve.Plan, owner *v1alpha1.RunOwner, checked []v1alpha1.StepStatus, others []v1alpha1.UpgradeRun) (*v1alpha1.UpgradeRun, error) {
	packed, err := p.PackedSources()
	if err != nil {
		return nil, fmt.Errorf("save the plan's sources: %w; nothing was changed", err)
	}
	ref, err := store.SavePackedSources(ctx, p.RunName(), packed)
	if err != nil {
		return nil, fmt.Errorf("save the plan's sources: %w; nothing was changed", err)
	}
	run := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
	run.Spec.Sources = &ref
	run.Spec.Owner = owner
	run.Status.Checks = checked
	// What the run starts from, for its report: written once, with the
	// spec.
	run.Spec.FromVersion = p.From
	if run.Spec.FromVersion == "" {
		run.Spec.FromVersion = engine.FromVersion(others)
	}
	// Its status is saved with the drive's first transition: a process
	// stopped before that leaves it created, never started, which the
	// next apply starts (ResumeRun, attempt 0, in prepare).
	if err := store.Create(ctx, run); err != nil {
		return nil, err
	}
	return run, nil
}
