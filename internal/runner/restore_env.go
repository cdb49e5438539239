package runner

import (
	"context"
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/gates/envkept"
	"github.com/upshift-dev/upshift/internal/step"
)

// envNotBack checks, after a rollback restored the stage, the variables
// each blocking envKept gate of the stage names, against the same backup
// the gate compared with: each one not back is a difference, so the
// restore is not verified. The restore's own comparison
// (backup.Compare) already covers the whole pod template, env included,
// but leaves a field uncompared when a manager that did not hold it
// before took it over since; the variables a plan names must be back
// whoever writes them. A warning or info gate's variables are not held
// to it, as the gate did not hold the stage to them.
func (a *actor) envNotBack(ctx context.Context, stage int, snap *backup.Snapshot) ([]string, error) {
	var diffs []string
	for j, g := range a.plan.Plan.Spec.Stages[stage].Gates {
		if g.EnvKept == nil || (g.Severity != "" && g.Severity != v1alpha1.SeverityBlocking) {
			continue
		}
		check, err := envkept.New(*g.EnvKept, durationOr(g.Timeout, DefaultGateTimeout), snap, a.deps.Dynamic)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %v", engine.GateName(g, j), err))
			continue
		}
		res, err := check.Check(ctx)
		if err != nil {
			return nil, err
		}
		if res.Status != step.Succeeded {
			diffs = append(diffs, res.Message)
		}
	}
	return diffs, nil
}
