package resolve

import (
	"fmt"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/source"
)

// checkSchemes refuses every plain http:// URL of the plan (url sources,
// helm charts and repositories) unless allowHTTP, naming each field:
// all of them at once, before anything is fetched or changed.
func checkSchemes(p *v1alpha1.UpgradePlan, allowHTTP bool) error {
	if allowHTTP {
		return nil
	}
	var errs []error
	check := func(field, u string) {
		if err := source.CheckScheme(u, false); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	for i, st := range p.Spec.Stages {
		for j, s := range st.Steps {
			for _, ps := range stepSources(i, j, s) {
				check(ps.path+".url", ps.src.URL)
			}
			if s.Helm != nil {
				check(HelmChartPath(i, j), s.Helm.Chart)
				check(fmt.Sprintf("spec.stages[%d].steps[%d].helm.repo", i, j), s.Helm.Repo)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return joined(errs)
}

// joined are errors on one line, each still found by errors.Is.
type joined []error

func (j joined) Error() string {
	msgs := make([]string, len(j))
	for i, err := range j {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (j joined) Unwrap() []error { return j }
