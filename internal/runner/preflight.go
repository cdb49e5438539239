package runner

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/preflight"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
)

// Preflight checks a resolved plan against the cluster before any change,
// as the plan acts (preflight.Run). Meanwhile it packs the plan's sources,
// for a run about to start.
func (s *Session) Preflight(ctx context.Context, p *resolve.Plan) field.ErrorList {
	p.PackAhead()
	return preflight.Run(ctx, s.preflightDeps(p), p)
}

// preflightDeps are what preflight needs of the session.
func (s *Session) preflightDeps(p *resolve.Plan) preflight.Deps {
	a := &actor{plan: p, deps: s.deps, runs: s.runs()}
	// Taken now: Apply hands the session's read-ahead on (takePreLease)
	// while a plan without CRDs never waits for preflight to read them.
	pre := s.preLease
	d := preflight.Deps{
		Clients:  s.deps,
		Client:   s.planCS,
		Executor: func(stage, i int) (step.Executor, error) { return a.executor(nil, stage, i) },
		Ahead:    func(ctx context.Context) *backup.Snapshot { return pre.snapshot(ctx, p) },
	}
	// A plan that acts as another identity (Options.PlanConfig) does not
	// write the runs: the driver does, as itself.
	if s.opts.PlanConfig == nil {
		d.RunsNamespace, d.RunsNamespaceReady = s.opts.Namespace, s.store.NamespaceReady
	}
	return d
}
