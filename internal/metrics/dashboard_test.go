package metrics

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// Registers controller-runtime's reconcile metrics, as the controller
	// does by building a controller.
	_ "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/install"
)

// Every metric the Grafana dashboard queries is one the controller
// registers: ours (Register) or controller-runtime's.
func TestDashboardQueriesRegisteredMetrics(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	d, err := install.ReadDashboard(filepath.Join(filepath.Dir(file), "..", "..", "config", "grafana", "upshift-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(StepDuration, StageDuration, GateFailures, Rollbacks, Transitions, Runs)
	reg.MustRegister(appCollectors()...)
	SetApp("shop/web", v1alpha1.AppHealthy)
	defer SetApp("shop/web", "")
	AppTransitions.WithLabelValues("Healthy")
	AppMeasurements.WithLabelValues("Successful")
	AppCanarySteps.WithLabelValues("10")
	// Vectors show in a gather only once they have a series.
	StepDuration.WithLabelValues("crds", "succeeded")
	StageDuration.WithLabelValues("succeeded")
	GateFailures.WithLabelValues("ready")
	Rollbacks.WithLabelValues("verified")
	Transitions.WithLabelValues("begin", "step")
	registered := map[string]bool{}
	for _, g := range []prometheus.Gatherer{reg, ctrlmetrics.Registry} {
		families, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			registered[f.GetName()] = true
		}
	}
	queried := 0
	for _, e := range d.Exprs() {
		for _, n := range install.MetricNames(e) {
			queried++
			fam := install.Family(n)
			if !registered[fam] && !taken(fam) {
				t.Errorf("the dashboard queries %s (family %s), which the controller does not register", n, fam)
			}
		}
	}
	if queried == 0 {
		t.Fatal("the dashboard queries no metric")
	}
}

// taken tells whether controller-runtime's registry holds a collector of
// that name (a vector without series does not show in a gather): the
// registry refuses a second collector of a name it has.
func taken(name string) bool {
	probe := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "probe"})
	if err := ctrlmetrics.Registry.Register(probe); err != nil {
		return true
	}
	ctrlmetrics.Registry.Unregister(probe)
	return false
}
