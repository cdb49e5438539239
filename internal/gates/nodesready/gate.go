package nodesready

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

// ErrInvalidSpec: the selector, if set, must parse, and minReady, if set,
// must be at least 1.
var ErrInvalidSpec = errors.New("a nodesReady gate needs a valid selector (or none) and a minReady of at least 1 (or none)")

// Gate checks that nodes are Ready.
type Gate struct {
	spec     v1alpha1.NodesReadyGate
	selector labels.Selector
	minReady int // 0: every matching node
	timeout  time.Duration
	cs       kubernetes.Interface
}

var _ step.Gate = (*Gate)(nil)

// New checks the spec.
func New(spec v1alpha1.NodesReadyGate, timeout time.Duration, cs kubernetes.Interface) (*Gate, error) {
	if spec.MinReady != nil && *spec.MinReady < 1 {
		return nil, ErrInvalidSpec
	}
	sel, err := labels.Parse(spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("%w: selector %q: %v", ErrInvalidSpec, spec.Selector, err)
	}
	g := &Gate{spec: spec, selector: sel, timeout: timeout, cs: cs}
	if spec.MinReady != nil {
		g.minReady = int(*spec.MinReady)
	}
	return g, nil
}

// Check waits until enough matching nodes are Ready, or the timeout passes.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	nodes := g.cs.CoreV1().Nodes()
	sel := g.selector.String()
	l := watchloop.Selecting("nodes", sel, nodes.List, nodes.Watch)
	j := judge{selector: g.spec.Selector, minReady: g.minReady}
	return watchloop.Until(ctx, g.timeout, l, &corev1.Node{}, j.look)
}
