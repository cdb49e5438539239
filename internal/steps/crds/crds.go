package crds

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// ErrNotCRD: the source of a crds step holds something else.
var ErrNotCRD = errors.New("not a CustomResourceDefinition")

// Executor applies the CRDs of one step.
type Executor struct {
	crds     []*unstructured.Unstructured
	minCount int
	timeout  time.Duration
	applier  *kube.Applier
	waiter   *kube.Waiter
}

var _ step.Executor = (*Executor)(nil)

// New checks that every object is a CustomResourceDefinition.
func New(spec v1alpha1.CRDsStep, objs []*unstructured.Unstructured, timeout time.Duration, a *kube.Applier, w *kube.Waiter) (*Executor, error) {
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("crds from %s: %s: %w", source.Describe(spec.Source), kube.RefOf(o), ErrNotCRD)
		}
	}
	return &Executor{crds: objs, minCount: spec.MinCount, timeout: timeout, applier: a, waiter: w}, nil
}

// Targets are the CRDs.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) {
	refs := make([]step.Ref, 0, len(e.crds))
	for _, o := range e.crds {
		refs = append(refs, kube.RefOf(o))
	}
	return refs, nil
}

// applies bounds the CRD writes in flight: the API server stores each
// schema on its own, so a few at once take the time of fewer, while a
// platform's dozens of large schemas do not crowd out other clients.
const applies = 4

// Run applies every CRD, a few at a time, then waits until each is
// Established (most updates answer established already: no wait).
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	if len(e.crds) < e.minCount {
		return step.Failure("the source holds %d CRDs, minCount is %d", len(e.crds), e.minCount), nil
	}
	if len(e.crds) == 0 {
		return step.Success("the source holds no CRDs"), nil
	}
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	applied := make([]*unstructured.Unstructured, len(e.crds))
	g, gctx := errgroup.WithContext(b.Context())
	g.SetLimit(applies)
	for i, crd := range e.crds {
		g.Go(func() error {
			var err error
			applied[i], err = e.applier.Apply(gctx, crd)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return b.Verdict(fmt.Errorf("apply CRDs: %w", err))
	}
	if err := e.waiter.WaitCRDsEstablished(ctx, applied, b.Left()); err != nil {
		return b.Verdict(err)
	}
	names := make([]string, 0, len(e.crds))
	for _, crd := range e.crds {
		names = append(names, crd.GetName())
	}
	return step.Success("%d CRDs established: %s", len(names), list(names, 5)), nil
}

// list joins names, cut after max: "a, b, c and 4 more".
func list(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
