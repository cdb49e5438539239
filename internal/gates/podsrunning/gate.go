package podsrunning

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

// ErrInvalidSpec: the gate needs a namespace, a valid non-empty selector
// and a maxRestarts that is not negative.
var ErrInvalidSpec = errors.New("a podsRunning gate needs a namespace, a valid selector and maxRestarts of 0 or more")

// Gate checks that pods run.
type Gate struct {
	spec        v1alpha1.PodsRunningGate
	selector    labels.Selector
	maxRestarts int32
	timeout     time.Duration
	cs          kubernetes.Interface
}

var _ step.Gate = (*Gate)(nil)

// New checks the spec and applies its default (maxRestarts 0).
func New(spec v1alpha1.PodsRunningGate, timeout time.Duration, cs kubernetes.Interface) (*Gate, error) {
	if spec.Namespace == "" || spec.Selector == "" || (spec.MaxRestarts != nil && *spec.MaxRestarts < 0) {
		return nil, ErrInvalidSpec
	}
	sel, err := labels.Parse(spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("%w: selector %q: %v", ErrInvalidSpec, spec.Selector, err)
	}
	g := &Gate{spec: spec, selector: sel, timeout: timeout, cs: cs}
	if spec.MaxRestarts != nil {
		g.maxRestarts = *spec.MaxRestarts
	}
	return g, nil
}

// Check waits until every matching pod is Running and Ready, or one cannot
// be, or the timeout passes.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	pods := g.cs.CoreV1().Pods(g.spec.Namespace)
	sel := g.selector.String()
	l := watchloop.Selecting("pods in "+g.spec.Namespace, sel, pods.List, pods.Watch)
	j := newJudge(g.spec.Namespace, g.spec.Selector, g.maxRestarts)
	return watchloop.Until(ctx, g.timeout, l, &corev1.Pod{}, j.look)
}
