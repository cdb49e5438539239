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
