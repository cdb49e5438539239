package gates

import (
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/gates/envkept"
	"github.com/upshift-dev/upshift/internal/gates/helmreleases"
	"github.com/upshift-dev/upshift/internal/gates/http"
	"github.com/upshift-dev/upshift/internal/gates/metric"
	"github.com/upshift-dev/upshift/internal/gates/nodesready"
	"github.com/upshift-dev/upshift/internal/gates/podsrunning"
	"github.com/upshift-dev/upshift/internal/gates/pvcsbound"
	"github.com/upshift-dev/upshift/internal/gates/ready"
	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultTimeout bounds a gate whose plan sets no timeout.
const DefaultTimeout = 2 * time.Minute

// ErrInvalidGate: a gate sets no kind, or more than one.
var ErrInvalidGate = errors.New("a gate needs exactly one kind (ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept or metric)")

// Before is the stage's backup as a gate reads it (an envKept gate
// compares with it). The runner passes the stage's snapshot; a gate never
// imports the backup package nor the steps.
type Before = envkept.Before

// NeedsBefore tells whether the gate compares with the stage's backup, so
// that the runner loads it only then.
func NeedsBefore(g v1alpha1.Gate) bool { return g.EnvKept != nil }

// New builds the check of one gate. timeout is the gate's timeout; zero
// means DefaultTimeout. An http gate's own timeout, if set, wins. before
// is the stage's backup, needed by the gates NeedsBefore names (nil for
// the others).
func New(g v1alpha1.Gate, timeout time.Duration, d *clients.Set, before Before) (step.Gate, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if kinds(g) != 1 {
		return nil, ErrInvalidGate
	}
	var (
		gate step.Gate
		kind string
		err  error
	)
	switch {
	case g.Ready != nil:
		kind = "ready"
		var rg *ready.Gate
		if rg, err = ready.New(*g.Ready, timeout, d.Waiter); err == nil {
			rg.Mapper = d.Mapper
			gate = rg
		}
	case g.HTTP != nil:
		kind = "http"
		gate, err = nonNil(http.New(*g.HTTP, timeout, d.Egress))
	case g.PodsRunning != nil:
		kind = "podsRunning"
		gate, err = nonNil(podsrunning.New(*g.PodsRunning, timeout, d.Clientset))
	case g.PVCsBound != nil:
		kind = "pvcsBound"
		gate, err = nonNil(pvcsbound.New(*g.PVCsBound, timeout, d.Clientset))
	case g.HelmReleases != nil:
		kind = "helmReleases"
		gate, err = nonNil(helmreleases.New(*g.HelmReleases, timeout, d.Helm))
	case g.EnvKept != nil:
		kind = "envKept"
		gate, err = nonNil(envkept.New(*g.EnvKept, timeout, before, d.Dynamic))
	case g.Metric != nil:
		kind = "metric"
		gate, err = nonNil(metric.New(*g.Metric, timeout, d.Egress))
	default:
		kind = "nodesReady"
		gate, err = nonNil(nodesready.New(*g.NodesReady, timeout, d.Clientset))
	}
	if err != nil {
		return nil, fmt.Errorf("%s gate: %w", kind, err)
	}
	return gate, nil
}

// kinds counts the kinds a gate sets.
func kinds(g v1alpha1.Gate) int {
	n := 0
	for _, set := range []bool{g.Ready != nil, g.HTTP != nil, g.PodsRunning != nil, g.PVCsBound != nil, g.NodesReady != nil, g.HelmReleases != nil, g.EnvKept != nil, g.Metric != nil} {
		if set {
			n++
		}
	}
	return n
}

// nonNil turns a kind's (*Gate, error) into a step.Gate that is nil, not a
// typed nil, on error.
func nonNil[G step.Gate](g G, err error) (step.Gate, error) {
	if err != nil {
		return nil, err
	}
	return g, nil
}
