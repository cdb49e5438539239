package apps

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/metrics"
)

// A saved decision counts the phase entered, the canary step and the
// measurements taken.
func TestDecisionsAreCounted(t *testing.T) {
	entered := func(p v1alpha1.AppPhase) float64 {
		return testutil.ToFloat64(metrics.AppTransitions.WithLabelValues(string(p)))
	}
	failed := func() float64 {
		return testutil.ToFloat64(metrics.AppMeasurements.WithLabelValues(string(v1alpha1.AnalysisFailed)))
	}
	step := func() float64 { return testutil.ToFloat64(metrics.AppCanarySteps.WithLabelValues("10")) }
	deploying, rolledBack, failures, steps := entered(v1alpha1.AppDeploying), entered(v1alpha1.AppRolledBack), failed(), step()

	w := newWorld(t, analysedSpec(), 10, "registry.example.com/shop:v1.0.0")
	count := func() {
		o := Observed{App: w.app.DeepCopy(), Deployment: w.dep.DeepCopy(), Canary: w.canary.DeepCopy(), Now: w.now}
		o.Measurements = w.measure()
		d := Decide(o)
		w.apply(o, &d)
		countIn(o, d)
		w.app.Status = d.Status
		ready(w.dep)
		ready(w.canary)
		w.now = w.now.Add(d.RequeueAfter)
	}
	w.value = 0.5
	for range 8 {
		count()
	}
	if entered(v1alpha1.AppDeploying) != deploying+1 || step() != steps+1 || failed() != failures+1 || entered(v1alpha1.AppRolledBack) != rolledBack+1 {
		t.Errorf("counted: Deploying +%v, 10%% steps +%v, failed measurements +%v, RolledBack +%v; want 1 each",
			entered(v1alpha1.AppDeploying)-deploying, step()-steps, failed()-failures, entered(v1alpha1.AppRolledBack)-rolledBack)
	}
}
