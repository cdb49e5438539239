package analysis

import (
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func conditions(t *testing.T, success, failure string) *Conditions {
	t.Helper()
	c, errs := Compile(v1alpha1.Metric{Name: "m", SuccessCondition: success, FailureCondition: failure}, field.NewPath("spec", "metrics").Index(0))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return c
}

// A value is judged as Argo Rollouts judges it: the failure condition
// first, then the success one; both set and neither holding is
// inconclusive; a condition that cannot be evaluated is an error.
func TestJudge(t *testing.T) {
	for _, tt := range []struct {
		name             string
		success, failure string
		value            any
		want             v1alpha1.AnalysisPhase
	}{
		{"success holds", "result < 0.05", "", 0.01, v1alpha1.AnalysisSuccessful},
		{"success does not hold", "result < 0.05", "", 0.2, v1alpha1.AnalysisFailed},
		{"failure holds", "", "result > 0.1", 0.2, v1alpha1.AnalysisFailed},
		{"failure does not hold", "", "result > 0.1", 0.01, v1alpha1.AnalysisSuccessful},
		{"both, failure holds", "result < 0.05", "result > 0.1", 0.2, v1alpha1.AnalysisFailed},
		{"both, success holds", "result < 0.05", "result > 0.1", 0.01, v1alpha1.AnalysisSuccessful},
		{"both, neither holds", "result < 0.05", "result > 0.1", 0.07, v1alpha1.AnalysisInconclusive},
		{"no condition", "", "", 42.0, v1alpha1.AnalysisSuccessful},
		{"an int compared with a double", "result == 0", "", 0.0, v1alpha1.AnalysisSuccessful},
		{"a vector", "result.all(x, x < 0.05)", "", []float64{0.01, 0.2}, v1alpha1.AnalysisFailed},
		{"JSON from a web provider", "result.status == 'ok'", "", map[string]any{"status": "ok"}, v1alpha1.AnalysisSuccessful},
		{"NaN, from an empty rate", "!math.isNaN(result) && result < 0.05", "", math.NaN(), v1alpha1.AnalysisFailed},
		{"a field the answer lacks", "result.status == 'ok'", "", map[string]any{"state": "ok"}, v1alpha1.AnalysisError},
		{"not a bool on this value", "result", "", 0.5, v1alpha1.AnalysisError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := conditions(t, tt.success, tt.failure).Judge(tt.value)
			if got != tt.want {
				t.Errorf("Judge(%v) = %s (%s), want %s", tt.value, got, msg, tt.want)
			}
			if got == v1alpha1.AnalysisError && msg == "" {
				t.Errorf("an error without a message")
			}
		})
	}
}

// A condition that is not CEL, or not a bool, is refused before anything
// runs, naming its field and how to write one.
func TestCompileNamesTheField(t *testing.T) {
	path := field.NewPath("spec", "analysis", "metrics").Index(1)
	for _, tt := range []struct {
		name             string
		success, failure string
		field, says      string
	}{
		{"not CEL", "result <", "", "spec.analysis.metrics[1].successCondition", "not a CEL expression"},
		{"a number", "", "result + 1.0", "spec.analysis.metrics[1].failureCondition", "not a bool"},
		{"an unknown variable", "value < 1", "", "spec.analysis.metrics[1].successCondition", "undeclared reference"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Compile(v1alpha1.Metric{Name: "m", SuccessCondition: tt.success, FailureCondition: tt.failure}, path)
			if len(errs) != 1 || errs[0].Field != tt.field || !strings.Contains(errs[0].Error(), tt.says) {
				t.Fatalf("errors %v, want one on %s saying %q", errs, tt.field, tt.says)
			}
		})
	}
}

// A condition is a tenant's input: one that costs too much on the value
// is an error, not a controller held for ever.
func TestCostLimit(t *testing.T) {
	big := make([]float64, 2000)
	c := conditions(t, "result.all(x, result.all(y, x == y))", "")
	if got, msg := c.Judge(big); got != v1alpha1.AnalysisError || !strings.Contains(msg, "cost") {
		t.Errorf("Judge of a quadratic condition over 2000 samples = %s (%s), want an error about its cost", got, msg)
	}
}

// A Job metric without conditions is judged by its exit code as a shell
// would: 0 successful, anything else failed; with conditions, they judge.
func TestJobMetricDefaultsToExitCodeZero(t *testing.T) {
	m := v1alpha1.Metric{Name: "smoke", Provider: v1alpha1.MetricProvider{Job: &v1alpha1.JobMetric{Image: "smoke:v1"}}}
	c, errs := Compile(m, field.NewPath("metric"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for code, want := range map[float64]v1alpha1.AnalysisPhase{0: v1alpha1.AnalysisSuccessful, 1: v1alpha1.AnalysisFailed, 137: v1alpha1.AnalysisFailed} {
		if got, _ := c.Judge(code); got != want {
			t.Errorf("exit code %v: %s, want %s", code, got, want)
		}
	}
	m.FailureCondition = "result == 2"
	c, _ = Compile(m, field.NewPath("metric"))
	if got, _ := c.Judge(1.0); got != v1alpha1.AnalysisSuccessful {
		t.Errorf("with failureCondition result == 2, exit code 1 is %s", got)
	}
	both := v1alpha1.MetricProvider{Job: m.Provider.Job, Web: &v1alpha1.WebMetric{URL: "https://x.example"}}
	if errs := validateProvider(both, field.NewPath("provider")); len(errs) != 1 || !strings.Contains(errs[0].Error(), "exactly one provider") {
		t.Errorf("job and web: %v", errs)
	}
	if errs := validateProvider(v1alpha1.MetricProvider{Job: &v1alpha1.JobMetric{}}, field.NewPath("provider")); len(errs) != 1 || errs[0].Field != "provider.job.image" {
		t.Errorf("job without an image: %v", errs)
	}
}
