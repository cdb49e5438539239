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
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/helmx"
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
	backups *stageBackups
	// readyTimeout bounds the wait for restored workloads.
	readyTimeout time.Duration
	// runs is the runs namespace and the driver's client (freeze steps).
	runs step.Runs
	// answers is the current stage's write answers while its gates may
	// fence on them, else nil (answers.go).
	answers atomic.Pointer[kube.Answers]
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
	ahead := a.backups.first.take(ctx, act) // nil: the backup reads for itself
	a.scopeAnswers(act)
	switch act.Kind {
	case engine.Backup:
		return a.backups.take(ctx, r, act.Stage, ahead)
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
	return steps.New(a.input(r, stage, i), a.withAnswers())
}

// input is what a step's executor is built from, besides a helm step's
// chart and values.
func (a *actor) input(r *v1alpha1.UpgradeRun, stage, i int) steps.Input {
	s := a.plan.Plan.Spec.Stages[stage].Steps[i]
	in := steps.Input{
		Spec:       s,
		HelmInputs: func() (*helmx.Chart, map[string]any, error) { return a.plan.HelmInputs(stage, i) },
		Objects:    a.plan.ObjectsFor(stage, i),
		Timeout:    durationOr(s.Timeout, stepTimeout(s)),
		Attempt:    attemptOf(r),
		Waits:      step.Waits{Approvals: a.approvals, Await: a.awaitApproval, Poll: a.poll, NoWait: a.noWait},
		Run:        a.plan.RunName(),
		Runs:       a.runs,
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

func (a *actor) step(ctx context.Context, r *v1alpha1.UpgradeRun, stage, i int) (engine.Outcome, error) {
	ex, err := a.executor(r, stage, i)
	if err != nil {
		return engine.Outcome{Message: err.Error()}, nil
	}
	a.backups.startNext(ctx, r, a.plan.Plan.Spec.Stages, stage)
	if s, ok := ex.(step.Seeder); ok {
		a.backups.seed(r, stage, s)
	}
	runningStep.Store(a.plan.Plan.Spec.Stages[stage].Steps[i].Name)
	res, err := ex.Run(ctx)
	runningStep.Store("")
	if errors.Is(err, ErrWaiting) {
		return engine.Outcome{}, err // stop as saved; apply resumes
	}
	if err != nil {
		return failed(ctx, err)
	}
	return a.result(ctx, res)
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
		return failed(ctx, err)
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
func failed(ctx context.Context, err error) (engine.Outcome, error) {
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

// stepTimeout is the default timeout of a step that sets none: its
// kind's (step.Traits.Timeout), or DefaultStepTimeout.
func stepTimeout(s v1alpha1.Step) time.Duration {
	if t := steps.TraitsOf(s).Timeout; t > 0 {
		return t
	}
	return DefaultStepTimeout
}
