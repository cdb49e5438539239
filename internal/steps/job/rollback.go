package job

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// NewRollback builds the executor of the step's rollbackJob: objs are the
// decoded objects of spec.RollbackJob, checked as New checks the step's
// own. It runs the same way, so a rollback resumed after a crash does not
// run the down-migration twice either; the rollback of another attempt
// does run it again (at keys the Job to the attempt).
func NewRollback(spec v1alpha1.JobStep, objs []*unstructured.Unstructured, timeout time.Duration, at step.RunAttempt, a *kube.Applier, w *kube.Waiter, cs kubernetes.Interface) (*Executor, error) {
	var src v1alpha1.Source
	if spec.RollbackJob != nil {
		src = *spec.RollbackJob
	}
	e, err := newExecutor(src, objs, timeout, at, a, w, cs)
	if err != nil {
		return nil, err
	}
	e.rollback = true
	return e, nil
}

// RunRollbackJob runs the step's rollbackJob to completion within timeout.
// A step without one has nothing to undo: Succeeded. Invalid objs are an
// error.
func RunRollbackJob(ctx context.Context, spec v1alpha1.JobStep, objs []*unstructured.Unstructured, timeout time.Duration, at step.RunAttempt, a *kube.Applier, w *kube.Waiter, cs kubernetes.Interface) (step.Result, error) {
	if spec.RollbackJob == nil {
		return step.Success("the step has no rollbackJob"), nil
	}
	e, err := NewRollback(spec, objs, timeout, at, a, w, cs)
	if err != nil {
		return step.Result{}, err
	}
	return e.Run(ctx)
}

// Reverter runs a job step's rollbackJob in a rollback, before the
// stage's objects are restored: the schema goes back while the old
// objects are not yet back.
type Reverter struct {
	spec    v1alpha1.JobStep
	objs    []*unstructured.Unstructured // the rollbackJob's; nil: not saved with the run
	timeout time.Duration
	at      step.RunAttempt
	applier *kube.Applier
	waiter  *kube.Waiter
	cs      kubernetes.Interface
}

var _ step.Reverter = (*Reverter)(nil)

// NewReverter is the reverter of a job step with a rollbackJob whose
// decoded objects are objs.
func NewReverter(spec v1alpha1.JobStep, objs []*unstructured.Unstructured, timeout time.Duration, at step.RunAttempt, a *kube.Applier, w *kube.Waiter, cs kubernetes.Interface) *Reverter {
	return &Reverter{spec: spec, objs: objs, timeout: timeout, at: at, applier: a, waiter: w, cs: cs}
}

// Revert runs the rollbackJob to completion (RunRollbackJob).
func (r *Reverter) Revert(ctx context.Context, _ *v1alpha1.BackupRef) (step.Reverted, error) {
	if r.objs == nil {
		return step.Reverted{Result: step.Failure("its rollbackJob source is not saved with the run: apply the plan again to save its sources, then roll back")}, nil
	}
	res, err := RunRollbackJob(ctx, r.spec, r.objs, r.timeout, r.at, r.applier, r.waiter, r.cs)
	if err != nil {
		return step.Reverted{}, err
	}
	if res.Status == step.Succeeded {
		res.Message = "rollback job: " + res.Message
	}
	return step.Reverted{Result: res}, nil
}
