package preflight

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// runsNamespace is where the tests' driver keeps runs (the runner's
// default).
const runsNamespace = "upshift-system"

// session gives preflight what a runner.Session gives it (Deps), which
// these tests cannot open: preflight does not import the runner.
type session struct {
	cs      kubernetes.Interface // the driver's
	planCS  kubernetes.Interface
	clients *clients.Set
	// asDriver: the plan acts with the driver's credentials, which then
	// write the runs too.
	asDriver bool
}

// open is runner.Open(cfg, Options{PlanConfig: planCfg}): the plan acts
// as planCfg, or as cfg when it is nil.
func open(cfg, planCfg *rest.Config) (*session, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &session{cs: cs, planCS: cs, asDriver: planCfg == nil}
	acting := cfg
	if planCfg != nil {
		acting = planCfg
		if s.planCS, err = kubernetes.NewForConfig(planCfg); err != nil {
			return nil, err
		}
	}
	if s.clients, err = clients.New(acting); err != nil {
		return nil, err
	}
	return s, nil
}

// Preflight is what runner.Session.Preflight does, without a read-ahead.
func (s *session) Preflight(ctx context.Context, p *resolve.Plan) field.ErrorList {
	runs := step.Runs{Namespace: runsNamespace, Client: s.cs}
	d := Deps{Clients: s.clients, Client: s.planCS, Executor: func(stage, i int) (step.Executor, error) {
		return executor(p, stage, i, s.clients, runs)
	}}
	if s.asDriver {
		d.RunsNamespace = runsNamespace
	}
	return Run(ctx, d, p)
}

// executor builds a step's executor from the registry, as the runner's
// actor does before a run starts.
func executor(p *resolve.Plan, stage, i int, set *clients.Set, runs step.Runs) (step.Executor, error) {
	s := p.Plan.Spec.Stages[stage].Steps[i]
	in := steps.Input{Spec: s, Objects: p.ObjectsFor(stage, i), Run: p.RunName(), Runs: runs,
		HelmInputs: func() (*helmx.Chart, map[string]any, error) { return p.HelmInputs(stage, i) }}
	if s.Timeout != nil {
		in.Timeout = s.Timeout.Duration
	}
	return steps.New(in, set)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
