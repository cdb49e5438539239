package supportbundle

import (
	"context"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// Sources reads the plan and sources saved with a run
// (*runstore.Store).
type Sources interface {
	LoadSources(ctx context.Context, name string) (*runstore.Saved, error)
}

// SourceNamespaces are the namespaces of the objects in a run's saved
// sources (what its manifests, CRDs and Jobs write), which its plan's
// fields do not name. A run whose sources cannot be read adds none.
func SourceNamespaces(ctx context.Context, src Sources, r *v1alpha1.UpgradeRun) []string {
	saved, err := src.LoadSources(ctx, r.Name)
	if err != nil {
		return nil
	}
	p, err := resolve.FromSources(&v1alpha1.UpgradePlan{ObjectMeta: engine.PlanMeta(r), Spec: saved.Plan}, saved.Sources)
	if err != nil {
		return nil
	}
	var out []string
	for _, objs := range p.Objects {
		for _, o := range objs {
			if ns := o.GetNamespace(); ns != "" {
				out = append(out, ns)
			}
		}
	}
	return out
}
