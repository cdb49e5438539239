package pvcsbound

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/watchloop"
)

// ErrInvalidSpec: the gate needs a namespace, and a selector that parses
// if it is set.
var ErrInvalidSpec = errors.New("a pvcsBound gate needs a namespace and, if set, a valid selector")

// Gate checks that claims are Bound.
type Gate struct {
	spec     v1alpha1.PVCsBoundGate
	selector labels.Selector
	timeout  time.Duration
	cs       kubernetes.Interface
}

var _ step.Gate = (*Gate)(nil)

// New checks the spec.
func New(spec v1alpha1.PVCsBoundGate, timeout time.Duration, cs kubernetes.Interface) (*Gate, error) {
	if spec.Namespace == "" {
		return nil, ErrInvalidSpec
	}
	sel, err := labels.Parse(spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("%w: selector %q: %v", ErrInvalidSpec, spec.Selector, err)
	}
	return &Gate{spec: spec, selector: sel, timeout: timeout, cs: cs}, nil
}

// Check waits until every matching claim is Bound, or one is Lost, or the
// timeout passes.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	claims := g.cs.CoreV1().PersistentVolumeClaims(g.spec.Namespace)
	sel := g.selector.String()
	l := watchloop.Selecting("persistentvolumeclaims in "+g.spec.Namespace, sel, claims.List, claims.Watch)
	j := judge{namespace: g.spec.Namespace, selector: g.spec.Selector}
	return watchloop.Until(ctx, g.timeout, l, &corev1.PersistentVolumeClaim{}, j.look)
}
