package apps

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
)

var egressNone = egress.Policy{}

// analysedSpec is a canary of two held steps with an error-rate metric
// measured every 30 s: good below 0.05, bad above 0.2, inconclusive in
// between.
func analysedSpec() v1alpha1.AppRolloutSpec {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	spec.UpgradeStrategy.Canary.Analysis = &v1alpha1.AppAnalysis{Metrics: []v1alpha1.Metric{{
		Name: "error-rate", Interval: &metav1.Duration{Duration: 30 * time.Second},
		SuccessCondition: "result[0] < 0.05", FailureCondition: "result[0] > 0.2",
		Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: "errors"}},
	}}}
	return spec
}

// A breach during the canary's pause rolls it back at once, the values
// measured kept in status.
func TestFailingMetricRollsTheCanaryBack(t *testing.T) {
	w := newWorld(t, analysedSpec(), 10, "registry.example.com/shop:v1.0.0")
	w.value = 0.01
	w.run(12) // into the first step's 300 s pause, measured every 30 s
	an := w.app.Status.Analysis
	if w.app.Status.Phase != v1alpha1.AppDeploying || an == nil || an.Metrics[0].Successful < 3 || an.Phase != v1alpha1.AnalysisRunning {
		t.Fatalf("after a while at 0.01: %+v", w.app.Status)
	}
	w.value = 0.5
	w.run(5)
	st := w.app.Status
	if st.Phase != v1alpha1.AppRolledBack || st.Analysis.Phase != v1alpha1.AnalysisFailed || !strings.Contains(st.Rollback.Reason, "analysis: metric error-rate failed") || !strings.Contains(st.Rollback.Reason, "0.5") {
		t.Fatalf("after the breach: phase %s, analysis %+v, rollback %+v", st.Phase, st.Analysis, st.Rollback)
	}
	if w.canary != nil || replicasOf(w.dep) != 10 {
		t.Errorf("not restored: canary %v, replicas %d", w.canary, replicasOf(w.dep))
	}
}

// An inconclusive measurement holds the canary (Paused, reason
// InconclusiveAnalysis) without a rollback; a promotion measures anew.
func TestInconclusiveMetricHoldsTheCanary(t *testing.T) {
	w := newWorld(t, analysedSpec(), 10, "registry.example.com/shop:v1.0.0")
	w.value = 0.1
	w.run(10)
	st := w.app.Status
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionPaused)
	if st.Phase != v1alpha1.AppDeploying || st.Analysis.Phase != v1alpha1.AnalysisInconclusive || c == nil || c.Reason != ReasonInconclusiveAnalysis {
		t.Fatalf("at 0.1: phase %s, analysis %+v, paused %+v", st.Phase, st.Analysis, c)
	}
	if d := w.step(); d.Action != None || d.RequeueAfter != 0 {
		t.Errorf("held: %+v, want nothing until a person acts", d)
	}
	w.value = 0.01
	w.app.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"}
	w.run(30)
	if st := w.app.Status; st.Phase != v1alpha1.AppHealthy || st.Analysis.Phase != v1alpha1.AnalysisSuccessful {
		t.Errorf("after the promotion: phase %s, analysis %+v", st.Phase, st.Analysis)
	}
}

// A metric whose condition does not compile, or an analysis that starts
// past the last step, is refused before the rollout starts, by field.
func TestValidateNamesTheField(t *testing.T) {
	app := &v1alpha1.AppRollout{Spec: analysedSpec()}
	app.Spec.UpgradeStrategy.Canary.Analysis.Metrics[0].SuccessCondition = "result[0] <"
	app.Spec.UpgradeStrategy.Canary.Analysis.StartingStep = 3
	got := Validate(app, egressNone).ToAggregate().Error()
	for _, want := range []string{"spec.upgradeStrategy.canary.analysis.metrics[0].successCondition", "spec.upgradeStrategy.canary.analysis.startingStep: Invalid value: 3: the canary has 3 steps"} {
		if !strings.Contains(got, want) {
			t.Errorf("Validate = %s\nwant it to name %q", got, want)
		}
	}
}
