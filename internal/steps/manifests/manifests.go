package manifests

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// Executor applies the objects of one step.
type Executor struct {
	objs    []*unstructured.Unstructured // in apply order
	timeout time.Duration
	applier *kube.Applier
	waiter  *kube.Waiter
}

var _ step.Executor = (*Executor)(nil)

// New orders the objects for applying. The spec's source was already read
// and decoded into objs by the caller.
func New(_ v1alpha1.ManifestsStep, objs []*unstructured.Unstructured, timeout time.Duration, a *kube.Applier, w *kube.Waiter) (*Executor, error) {
	return &Executor{objs: applyOrder(objs), timeout: timeout, applier: a, waiter: w}, nil
}

// Targets are the objects, in apply order.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) {
	refs := make([]step.Ref, 0, len(e.objs))
	for _, o := range e.objs {
		refs = append(refs, kube.RefOf(o))
	}
	return refs, nil
}

// Run applies every object, then waits until all are Current.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	if len(e.objs) == 0 {
		return step.Success("the source holds no objects"), nil
	}
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	crdsDone := false
	applied := make([]*unstructured.Unstructured, 0, len(e.objs))
	for _, o := range e.objs {
		if !crdsDone && applyRank(o) > 1 {
			// Custom resources further down need their kinds served.
			if err := e.waitCRDs(ctx, b); err != nil {
				return b.Verdict(err)
			}
			crdsDone = true
		}
		a, err := e.applier.Apply(b.Context(), o)
		if err != nil {
			return b.Verdict(fmt.Errorf("apply manifests: %w", err))
		}
		applied = append(applied, a)
	}
	if err := e.waiter.WaitAllWritten(ctx, applied, b.Left()); err != nil {
		return b.Verdict(err)
	}
	return step.Success("applied %d objects, all Current", len(e.objs)), nil
}

func (e *Executor) waitCRDs(ctx context.Context, b *budget.Budget) error {
	for _, o := range e.objs {
		if isCRD(o) {
			if _, err := e.waiter.WaitCRDEstablished(ctx, o.GetName(), b.Left()); err != nil {
				return err
			}
		}
	}
	return nil
}
