package apps

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis"
	"github.com/upshift-dev/upshift/internal/egress"
)

// Validate checks what the API server's schema cannot before a rollout
// starts: its metrics' CEL conditions compile, their providers are
// usable and keep to policy, the analysis starts at a step that exists.
// Each error names its field.
func Validate(app *v1alpha1.AppRollout, policy egress.Policy) field.ErrorList {
	_, errs := windowsOf(app)
	strategy := field.NewPath("spec", "upgradeStrategy")
	if a := analysisFor(app, v1alpha1.AnalysisCanary); a != nil {
		path := strategy.Child("canary", "analysis")
		if n := int32(len(app.Spec.UpgradeStrategy.Canary.Steps)); a.StartingStep >= n {
			errs = append(errs, field.Invalid(path.Child("startingStep"), a.StartingStep, fmt.Sprintf("the canary has %d steps: start at 0 to %d", n, n-1)))
		}
		errs = append(errs, validateMetrics(a, path, policy)...)
	}
	for _, k := range [][2]string{{v1alpha1.AnalysisPrePromotion, "prePromotionAnalysis"}, {v1alpha1.AnalysisPostPromotion, "postPromotionAnalysis"}} {
		if a := analysisFor(app, k[0]); a != nil {
			errs = append(errs, validateMetrics(a, strategy.Child("blueGreen", k[1]), policy)...)
		}
	}
	return errs
}

// validateMetrics checks an analysis's metrics, as the metric gate's.
func validateMetrics(a *v1alpha1.AppAnalysis, path *field.Path, policy egress.Policy) field.ErrorList {
	var errs field.ErrorList
	for i, m := range a.Metrics {
		p := path.Child("metrics").Index(i)
		if ms := analysis.Validate(m, p); len(ms) > 0 {
			errs = append(errs, ms...)
			continue
		}
		if m.Provider.Job != nil {
			continue // a Job runs in the rollout's namespace: no egress to check
		}
		if _, err := analysis.NewProvider(m, policy); err != nil {
			errs = append(errs, field.Forbidden(p.Child("provider"), err.Error()))
		}
	}
	return errs
}
