package runner

import (
	"context"

	"github.com/upshift-dev/upshift/internal/engine"
)

// stagesDone reads the run saved under the plan's name and says which of
// its stages will not run forward again (engine.StagesDone). It is read
// before the lease is taken, so it is a hint for what to check, never a
// decision: apply decides again from the record it reads under the lease.
// A failed read (no record, no CRD yet) answers nil, every stage checked
// in full, which is never less safe than the hint.
func (s *Session) stagesDone(ctx context.Context, p *Resolved) []bool {
	existing, err := s.store.Get(ctx, p.Plan.Name)
	if err != nil {
		return nil
	}
	return engine.StagesDone(existing, p.Digest, p.SourceDigests)
}

// stageDone says whether stage i is one a resumed run finished.
func (pf *preflight) stageDone(i int) bool {
	return i < len(pf.done) && pf.done[i]
}

// planHasHelmStep says whether any stage of the plan has a Helm step, the
// one kind whose preflight check costs enough to skip for finished stages.
func planHasHelmStep(p *Resolved) bool {
	for _, st := range p.Plan.Spec.Stages {
		if hasHelmStep(st) {
			return true
		}
	}
	return false
}
