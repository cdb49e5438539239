package runner

import (
	"context"
	"fmt"

	"github.com/upshift-dev/upshift/internal/step"
)

// Targets lists, per stage and step, the objects each step will touch
// (what its stage's backup will hold). It changes nothing.
func (s *Session) Targets(ctx context.Context, p *Resolved) ([][][]step.Ref, error) {
	a := &actor{plan: p, deps: s.deps}
	out := make([][][]step.Ref, len(p.Plan.Spec.Stages))
	for i, st := range p.Plan.Spec.Stages {
		out[i] = make([][]step.Ref, len(st.Steps))
		for j := range st.Steps {
			ex, err := a.executor(nil, i, j)
			if err != nil {
				return nil, fmt.Errorf("stage %s, step %s: %w", st.Name, st.Steps[j].Name, err)
			}
			refs, err := ex.Targets(ctx)
			if err != nil {
				return nil, fmt.Errorf("stage %s, step %s: %w", st.Name, st.Steps[j].Name, err)
			}
			out[i][j] = refs
		}
	}
	return out, nil
}
