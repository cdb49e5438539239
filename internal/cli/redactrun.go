package cli

import (
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runner"
)

// shownRun is a copy of a run fit to print: inline sources, which may hold
// Secret manifests (the reason runs are kept in Secrets), are replaced by
// their size and digest.
func shownRun(r *v1alpha1.UpgradeRun) *v1alpha1.UpgradeRun {
	cp := copyRun(r)
	for i := range cp.Spec.Plan.Stages {
		for j := range cp.Spec.Plan.Stages[i].Steps {
			s := &cp.Spec.Plan.Stages[i].Steps[j]
			var src *v1alpha1.Source
			switch {
			case s.CRDs != nil:
				src = &s.CRDs.Source
			case s.Manifests != nil:
				src = &s.Manifests.Source
			}
			if src == nil || src.Inline == "" {
				continue
			}
			src.Inline = fmt.Sprintf("<inline YAML, %d bytes, %s>", len(src.Inline), cp.Spec.SourceDigests[runner.SourcePath(i, j, *s)])
		}
	}
	return cp
}

func shownRuns(runs []v1alpha1.UpgradeRun) []*v1alpha1.UpgradeRun {
	out := make([]*v1alpha1.UpgradeRun, len(runs))
	for i := range runs {
		out[i] = shownRun(&runs[i])
	}
	return out
}
