// Package ready is the `ready` gate: an object, or every object a label
// selector matches, must be Current by kstatus (workloads rolled out with
// no crashing pod, Jobs complete, CRDs Established…). A selector that
// matches nothing fails: it is far more often a typo than an object to come.
package ready

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// ErrInvalidSpec: the gate needs apiVersion, kind and exactly one of name
// and selector.
var ErrInvalidSpec = errors.New("a ready gate needs apiVersion, kind and exactly one of name or selector")

// Gate checks readiness.
type Gate struct {
	spec    v1alpha1.ReadyGate
	timeout time.Duration
	waiter  *kube.Waiter
	// Mapper tells, for ifServed, a kind the cluster does not serve: the
	// waiter would wait for it to come.
	Mapper meta.RESTMapper
}

var _ step.Gate = (*Gate)(nil)

// New checks the spec.
func New(spec v1alpha1.ReadyGate, timeout time.Duration, w *kube.Waiter) (*Gate, error) {
	if spec.APIVersion == "" || spec.Kind == "" || (spec.Name == "") == (spec.Selector == "") {
		return nil, ErrInvalidSpec
	}
	return &Gate{spec: spec, timeout: timeout, waiter: w}, nil
}

// Check waits until the object (or every match) is Current.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	s := g.spec
	if s.IfServed && g.Mapper != nil {
		gvk := schema.FromAPIVersionAndKind(s.APIVersion, s.Kind)
		if _, err := g.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); notServed(err) {
			return step.Success("the cluster does not serve %s %s: nothing to check (ifServed)", s.APIVersion, s.Kind), nil
		}
	}
	var (
		h   kube.Health
		err error
	)
	if s.Name != "" {
		h, err = g.waiter.WaitCurrent(ctx, kube.ObjectRef{APIVersion: s.APIVersion, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name}, g.timeout)
	} else {
		h, err = g.waiter.WaitSelectorCurrent(ctx, kube.SelectorRef{APIVersion: s.APIVersion, Kind: s.Kind, Namespace: s.Namespace, Selector: s.Selector}, g.timeout)
	}
	var nre *kube.NotReadyError
	switch {
	case errors.As(err, &nre):
		return step.Failure("%s", nre.Error()), nil
	case err != nil:
		return step.Result{}, fmt.Errorf("ready gate: %w", err)
	}
	if s.Name != "" {
		return step.Success("%s is Current", kube.ObjectRef{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name}), nil
	}
	return step.Success("%s", h.Message), nil
}

// notServed tells an error that says the cluster has no such kind.
func notServed(err error) bool {
	return err != nil && meta.IsNoMatchError(err)
}
