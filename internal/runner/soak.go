package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultSoakInterval is how often a soak re-checks the stage's gates.
const DefaultSoakInterval = 5 * time.Second

// soak keeps checking the stage's other blocking gates until the soak's
// duration has passed since it first started (a resumed soak goes on, it
// does not start over). Any of them failing once fails the stage: a
// regression after the upgrade looked healthy.
func (a *actor) soak(ctx context.Context, r *v1alpha1.UpgradeRun, stage, i int) (engine.Outcome, error) {
	spec := a.plan.Plan.Spec.Stages[stage]
	sk := spec.Gates[i].Soak
	interval := durationOr(sk.Interval, DefaultSoakInterval)
	start := time.Now()
	if st := r.Status.Stages[stage].Gates[i].StartedAt; st != nil {
		start = st.Time
	}
	until := start.Add(sk.Duration.Duration)
	// Read once: the backup does not change while the stage soaks.
	before, err := a.before(ctx, r, stage, spec.Gates...)
	if err != nil {
		return a.beforeFailed(ctx, err)
	}
	for rounds := 1; ; rounds++ {
		for j, g := range spec.Gates {
			if j == i || g.Soak != nil || (g.Severity != "" && g.Severity != v1alpha1.SeverityBlocking) {
				continue
			}
			// A round's check may wait one interval for its condition: a
			// blip shorter than that is not a regression.
			check, err := gates.New(g, interval, a.withAnswers(), before)
			if err != nil {
				return engine.Outcome{Message: err.Error()}, nil
			}
			res, err := check.Check(ctx)
			if err != nil {
				return failed(ctx, err)
			}
			if res.Status != step.Succeeded {
				if ctx.Err() != nil {
					return engine.Outcome{}, context.Cause(ctx)
				}
				return engine.Outcome{Message: fmt.Sprintf("regression %s into the soak: %s: %s",
					time.Since(start).Round(time.Second), engine.GateName(g, j), res.Message)}, nil
			}
		}
		left := time.Until(until)
		if left <= 0 {
			return engine.Outcome{OK: true, Message: fmt.Sprintf("no regression in %d check(s) over %s", rounds, sk.Duration.Duration)}, nil
		}
		select {
		case <-ctx.Done():
			return engine.Outcome{}, context.Cause(ctx)
		case <-time.After(min(interval, left)):
		}
	}
}
