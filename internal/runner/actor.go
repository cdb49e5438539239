package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// Defaults the plan format documents.
const (
	DefaultStepTimeout = 5 * time.Minute
	DefaultGateTimeout = 2 * time.Minute
)

// actor does the IO of the engine's actions against one cluster.
type actor struct {
	store   *runstore.Store
	poll    time.Duration // how often approvals are looked for
	noWait  bool          // approval and pause stop the run instead of waiting
	plan    *resolve.Plan
	deps    *clients.Set
	backups *backup.Client
	// readyTimeout bounds the wait for restored workloads.
	readyTimeout time.Duration
	// runs is the runs namespace and the driver's client (freeze steps).
	runs step.Runs
	// ahead is the first stage's snapshot read ahead, for a new run's
	// first action (see readAhead); nil when there is none.
	ahead *readAhead
	// taken is the snapshot of the last backup this actor took, which
	// the steps of its stage may start from (step.Seeder).
	taken atomic.Pointer[takenSnapshot]
	// early is the next stage's backup, taken while a stage of image
	// steps rolls out (backup_early.go).
	early atomic.Pointer[earlyBackup]
	// answers is the current stage's write answers while its gates may
	// fence on them, else nil (answers.go).
	answers atomic.Pointer[kube.Answers]
}

// takenSnapshot is a stage's snapshot, as the backup of the run's
// attempt took it.
type takenSnapshot struct {
	run     string // the run's UID
	attempt int
	stage   int
	snap    *backup.Snapshot
}

var _ engine.Actor = (*actor)(nil)

// Act does one action. Its message is stored in the run record, which
// lives in the cluster, so it leaves here clean: every URL in it without
// its credentials (redact.Text). Sources, Helm and gates clean their own
// messages where they are made (a Helm step scrubs its values); this is
// the one place every outcome passes, so nothing new escapes it.
func (a *actor) Act(ctx context.Context, r *v1alpha1.UpgradeRun, act engine.Action) (engine.Outcome, error) {
	o, err := a.act(ctx, r, act)
	o.Message = redact.Text(o.Message)
	if o.Rollback != nil {
		for i, d := range o.Rollback.Differences {
			o.Rollback.Differences[i] = redact.Text(d)
		}
	}
	return o, redact.Error(err)
}

func (a *actor) act(ctx context.Context, r *v1alpha1.UpgradeRun, act engine.Action) (engine.Outcome, error) {
	ahead := a.ahead.take(ctx, act) // nil: the backup reads for itself
	a.scopeAnswers(act)
	switch act.Kind {
	case engine.Backup:
		return a.backup(ctx, r, act.Stage, ahead)
	case engine.RunStep:
		return a.step(ctx, r, act.Stage, act.Index)
	case engine.CheckGate:
		return a.gate(ctx, r, act.Stage, act.Index)
	case engine.Restore:
		return a.restore(ctx, r, act.Stage)
	}
	return engine.Outcome{}, fmt.Errorf("unknown action %s", act)
}

// executor builds a step's executor. r is the run as the action sees it
// (nil when only listing targets).
func (a *actor) executor(r *v1alpha1.UpgradeRun, stage, i int) (step.Executor, error) {
	in := a.input(r, stage, i)
	if s := in.Spec; s.Helm != nil {
		var err error
		if in.Chart, in.Values, err = a.plan.HelmInputs(stage, i); err != nil {
			return nil, fmt.Errorf("step %q: %w", s.Name, err)
		}
	}
	return steps.New(in, a.withAnswers())
}

// input is what a step's executor is built from, besides a helm step's
// chart and values.
func (a *actor) input(r *v1alpha1.UpgradeRun, stage, i int) steps.Input {
	s := a.plan.Plan.Spec.Stages[stage].Steps[i]
	in := steps.Input{
		Spec:    s,
		Objects: a.plan.ObjectsFor(stage, i),
		Timeout: durationOr(s.Timeout, DefaultStepTimeout),
		Attempt: attemptOf(r),
		Waits:   step.Waits{Approvals: a.approvals, Await: a.awaitApproval, Poll: a.poll, NoWait: a.noWait},
		Run:     a.plan.RunName(),
		Runs:    a.runs,
	}
	if r != nil && r.Status.Stages[stage].Steps[i].StartedAt != nil {
		in.Started = r.Status.Stages[stage].Steps[i].StartedAt.Time
	}
	return in
}

// approvals reads a step's approval from the saved run: operators write
// it there (upshift approve) while this process drives the run.
func (a *actor) approvals(ctx context.Context, stepName string) (*v1alpha1.Approval, error) {
	r, err := a.store.Get(ctx, a.plan.RunName())
	if err != nil {
		return nil, err
	}
	if ap, ok := engine.Approved(r, stepName); ok {
		return ap, nil
	}
	return nil, nil
}

// awaitApproval waits, on one watch of the saved run, until it holds an
// approval of the step: heard as soon as it is written, where reading the
// run every poll cost a request each time and heard it up to that late.
// A user who may not watch runs gets step.ErrCannotAwait, and the step
// reads instead.
func (a *actor) awaitApproval(ctx context.Context, stepName string) (*v1alpha1.Approval, error) {
	var got *v1alpha1.Approval
	err := followRun(ctx, a.store, a.plan.RunName(), a.poll, func(r *v1alpha1.UpgradeRun) bool {
		got, _ = engine.Approved(r, stepName)
		return got == nil
	})
	switch {
	case got != nil:
		return got, nil
	case apierrors.IsForbidden(err):
		return nil, step.ErrCannotAwait
	case err == nil:
		err = context.Cause(ctx)
	}
	return nil, err
}

// attemptOf is the run attempt an action acts for (zero when r is nil:
// only listing targets, nothing runs).
func attemptOf(r *v1alpha1.UpgradeRun) step.RunAttempt {
	if r == nil {
		return step.RunAttempt{}
	}
	return step.RunAttempt{Run: r.Name, Attempt: r.Status.Attempt}
}

// backup snapshots every object the stage's steps name, saves it and has
// it read back and verified (backup.Save does) before any change. snap,
// if not nil, is the stage's snapshot read ahead (readAhead). A backup
// that a stopped process took of this stage attempt was adopted before
// the drive (Session.reconcile) when its steps may have run; otherwise no step
// of the stage ran, and Save writes over what is left of it.
func (a *actor) backup(ctx context.Context, r *v1alpha1.UpgradeRun, stage int, snap *backup.Snapshot) (engine.Outcome, error) {
	key := backup.Key{Run: r.Name, Stage: r.Status.Stages[stage].Name, Attempt: r.Status.Attempt}
	if snap == nil {
		if o, ok := a.useEarlyBackup(ctx, r, stage); ok {
			return o, nil
		}
		var o engine.Outcome
		var err error
		if o, snap, err = a.snapshot(ctx, r, stage, a.backups.Take); err != nil || snap == nil {
			return o, err
		}
	}
	snap.RunUID = string(r.UID)
	var err error
	// What the stage's kinds keep (Helm releases' revisions) goes into
	// the snapshot, so a backup found after a stop holds it as the record
	// would (backup.Client.Find).
	if snap.HelmReleases, err = a.kept(ctx, stage); err != nil {
		return a.failed(ctx, err)
	}
	enc, err := backup.Encode(snap)
	if err != nil {
		return a.failed(ctx, fmt.Errorf("save: %w", err))
	}
	ref, err := a.backups.SaveEncoded(ctx, key, enc)
	if err != nil {
		return a.failed(ctx, fmt.Errorf("save: %w", err))
	}
	a.taken.Store(&takenSnapshot{run: string(r.UID), attempt: r.Status.Attempt, stage: stage, snap: snap})
	ref.HelmReleases = snap.HelmReleases
	return engine.Outcome{OK: true, Backup: &ref, Message: describeBackup(&ref)}, nil
}

// snapshot takes the stage's snapshot with take (backup.Client.Take, or
// TakeCached for a read-ahead confirmed later); a nil snapshot comes with
// the outcome or error that stopped it.
func (a *actor) snapshot(ctx context.Context, r *v1alpha1.UpgradeRun, stage int, take func(context.Context, []step.Ref) (*backup.Snapshot, error)) (engine.Outcome, *backup.Snapshot, error) {
	refs, err := a.targets(ctx, r, stage)
	var invalid *invalidStepError
	switch {
	case errors.As(err, &invalid):
		return engine.Outcome{Message: invalid.Error()}, nil, nil
	case err != nil:
		o, err := a.failed(ctx, err)
		return o, nil, err
	}
	snap, err := take(ctx, refs)
	if err != nil {
		o, err := a.failed(ctx, fmt.Errorf("snapshot: %w", err))
		return o, nil, err
	}
	return engine.Outcome{}, snap, nil
}

// targets lists the objects every step of the stage names. A step whose
// spec does not build is an *invalidStepError.
func (a *actor) targets(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) ([]step.Ref, error) {
	var refs []step.Ref
	for i := range a.plan.Plan.Spec.Stages[stage].Steps {
		ex, err := a.executor(r, stage, i)
		if err != nil {
			return nil, &invalidStepError{err}
		}
		t, err := ex.Targets(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the objects step %s touches: %w", a.plan.Plan.Spec.Stages[stage].Steps[i].Name, err)
		}
		refs = append(refs, t...)
	}
	return refs, nil
}

// invalidStepError: a step's spec does not build an executor.
type invalidStepError struct{ error }

func (e *invalidStepError) Unwrap() error { return e.error }

func (a *actor) step(ctx context.Context, r *v1alpha1.UpgradeRun, stage, i int) (engine.Outcome, error) {
	ex, err := a.executor(r, stage, i)
	if err != nil {
		return engine.Outcome{Message: err.Error()}, nil
	}
	a.startEarlyBackup(ctx, r, stage)
	if s, ok := ex.(step.Seeder); ok {
		a.seed(r, stage, s)
	}
	runningStep.Store(a.plan.Plan.Spec.Stages[stage].Steps[i].Name)
	res, err := ex.Run(ctx)
	runningStep.Store("")
	if errors.Is(err, ErrWaiting) {
		return engine.Outcome{}, err // stop as saved; apply resumes
	}
	if err != nil {
		return a.failed(ctx, err)
	}
	return a.result(ctx, res)
}

// seed gives a step the copies of its targets that its stage's backup
// took in this process, for this attempt of the run: the step then need
// not read them again before it writes (it writes only if they did not
// move since). A stage resumed elsewhere has none, and its steps read.
func (a *actor) seed(r *v1alpha1.UpgradeRun, stage int, s step.Seeder) {
	t := a.taken.Load()
	if t == nil || t.run != string(r.UID) || t.attempt != r.Status.Attempt || t.stage != stage {
		return
	}
	s.Seed(t.snap.Held)
}

func (a *actor) gate(ctx context.Context, r *v1alpha1.UpgradeRun, stage, i int) (engine.Outcome, error) {
	g := a.plan.Plan.Spec.Stages[stage].Gates[i]
	if g.Soak != nil {
		return a.soak(ctx, r, stage, i)
	}
	before, err := a.before(ctx, r, stage, g)
	if err != nil {
		return a.beforeFailed(ctx, err)
	}
	check, err := gates.New(g, durationOr(g.Timeout, DefaultGateTimeout), a.withAnswers(), before)
	if err != nil {
		return engine.Outcome{Message: err.Error()}, nil
	}
	res, err := check.Check(ctx)
	if err != nil {
		return a.failed(ctx, err)
	}
	return a.result(ctx, res)
}

// result turns a step's or gate's result into an outcome. A failure seen
// after the context ended (Ctrl-C, abort, lost lease) may be the cut-off
// itself: the run stops as saved instead of rolling back.
func (a *actor) result(ctx context.Context, res step.Result) (engine.Outcome, error) {
	if res.Status != step.Succeeded && ctx.Err() != nil {
		return engine.Outcome{}, context.Cause(ctx)
	}
	if res.Status == step.Running {
		// Asked again after its delay; never at once, which would spin.
		return engine.Outcome{Again: max(res.After, minAgain), Message: res.Message}, nil
	}
	return engine.Outcome{OK: res.Status == step.Succeeded, Message: res.Message}, nil
}

// minAgain is the shortest wait before a step that is still running is
// asked again: a step that asks for none would spin.
const minAgain = 100 * time.Millisecond

// failed turns an executor error into the right thing: when the context
// ended (interrupted, lease lost, aborted) or the API server is unreachable
// the run stops as saved and will resume; any other error is the action's
// failure.
func (a *actor) failed(ctx context.Context, err error) (engine.Outcome, error) {
	if ctx.Err() != nil {
		return engine.Outcome{}, context.Cause(ctx)
	}
	if errors.Is(err, lease.ErrFenced) { // a write refused for want of the lease
		return engine.Outcome{}, fmt.Errorf("%w: %v", ErrLeaseLost, err)
	}
	if kube.Unreachable(err) {
		return engine.Outcome{}, fmt.Errorf("%w: %v", ErrAPIUnavailable, err)
	}
	return engine.Outcome{Message: err.Error()}, nil
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d != nil && d.Duration > 0 {
		return d.Duration
	}
	return def
}

// describeBackup says what a backup holds: objects as they were, and how
// many the stage may create (deleted again on rollback).
func describeBackup(ref *v1alpha1.BackupRef) string {
	return fmt.Sprintf("%d existing object(s) saved, %d to be created, in %d Secret(s)", ref.Objects, ref.Absent, len(ref.Secrets))
}
