package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
)

// PlanPreview is what `upshift plan` shows against a cluster: per step,
// what will change; per stage, how long it took in earlier runs.
type PlanPreview struct {
	Plan    string         `json:"plan"`
	Version string         `json:"version"`
	Stages  []StagePreview `json:"stages"`
	// Estimate is the sum of the stages' estimates; empty when a stage
	// has none.
	Estimate string `json:"estimate,omitempty"`
}

// StagePreview is one stage of a preview.
type StagePreview struct {
	Name  string        `json:"name"`
	Steps []StepPreview `json:"steps"`
	// Estimate is the median duration of the stage in earlier successful
	// runs (by stage name); EstimateFrom counts them.
	Estimate     string `json:"estimate,omitempty"`
	EstimateFrom int    `json:"estimateFrom,omitempty"`
}

// StepPreview is one step: its changes, in the order it makes them.
type StepPreview struct {
	Name    string        `json:"name"`
	Changes []step.Change `json:"changes"`
}

// Preview computes, without changing anything, what each step of the plan
// would change if it ran now, and estimates each stage's duration from
// the runs in the store. A later stage's preview sees the cluster as it is
// now, not as the earlier stages will leave it: objects that depend on
// them carry a note instead of a diff.
func (s *Session) Preview(ctx context.Context, p *resolve.Plan) (*PlanPreview, error) {
	a := &actor{plan: p, deps: s.deps, runs: s.runs()}
	out := &PlanPreview{Plan: p.Plan.Name, Version: p.Plan.Spec.Version}
	for i, st := range p.Plan.Spec.Stages {
		sp := StagePreview{Name: st.Name, Steps: make([]StepPreview, len(st.Steps))}
		for j, sd := range st.Steps {
			sp.Steps[j] = StepPreview{Name: sd.Name, Changes: []step.Change{}}
			ex, err := a.executor(nil, i, j)
			if err != nil {
				return nil, fmt.Errorf("stage %s, step %s: %w", st.Name, sd.Name, err)
			}
			pv, ok := ex.(step.Previewer)
			if !ok {
				continue
			}
			changes, err := pv.Preview(ctx)
			if err != nil {
				return nil, fmt.Errorf("preview stage %s, step %s: %w", st.Name, sd.Name, err)
			}
			sp.Steps[j].Changes = changes
		}
		out.Stages = append(out.Stages, sp)
	}
	runs, err := s.store.List(ctx)
	if err != nil {
		return nil, err
	}
	estimate(out, runs)
	return out, nil
}

// estimate sets each stage's estimate to the median duration of the
// succeeded stages of the same name in runs, and the plan's to their sum
// when every stage has one.
func estimate(p *PlanPreview, runs []v1alpha1.UpgradeRun) {
	took := stageEstimates(runs)
	var total time.Duration
	all := len(p.Stages) > 0
	for i := range p.Stages {
		e, ok := took[p.Stages[i].Name]
		if !ok {
			all = false
			continue
		}
		p.Stages[i].Estimate, p.Stages[i].EstimateFrom = e.median.Round(100*time.Millisecond).String(), e.from
		total += e.median
	}
	if all {
		p.Estimate = total.Round(100 * time.Millisecond).String()
	}
}

// stageEstimate is how long a stage took: the median of its past runs.
type stageEstimate struct {
	median time.Duration
	from   int // how many runs it is the median of
}

// stageEstimates are the estimates of every stage name that succeeded in
// runs: what upshift plan shows, and what a maintenance window must have
// left for the stage to start.
func stageEstimates(runs []v1alpha1.UpgradeRun) map[string]stageEstimate {
	took := map[string][]time.Duration{}
	for _, r := range runs {
		for _, st := range r.Status.Stages {
			if st.Phase == v1alpha1.PhaseSucceeded && st.StartedAt != nil && st.FinishedAt != nil {
				took[st.Name] = append(took[st.Name], st.FinishedAt.Sub(st.StartedAt.Time))
			}
		}
	}
	out := make(map[string]stageEstimate, len(took))
	for name, ds := range took {
		slices.Sort(ds)
		m := ds[len(ds)/2]
		if len(ds)%2 == 0 {
			m = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
		}
		out[name] = stageEstimate{median: m, from: len(ds)}
	}
	return out
}
