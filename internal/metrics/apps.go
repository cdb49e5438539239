package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The app layer's metrics: AppRollouts by phase, the phases they enter,
// their analyses' measurements and their rollbacks. By phase and verdict,
// not by rollout: ten thousand rollouts must not make ten thousand series.
var (
	// AppRollouts counts the AppRollouts this controller reconciles, by
	// phase (SetApp).
	AppRollouts = &appsCollector{phases: map[string]v1alpha1.AppPhase{}}
	// AppTransitions counts the phases rollouts entered.
	AppTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upshift_app_transitions_total",
		Help: "Phases AppRollouts entered (Migrating, Deploying, HealthChecking, Healthy, Failed, RolledBack).",
	}, []string{"phase"})
	// AppMeasurements counts the analyses' measurements by verdict.
	AppMeasurements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upshift_app_analysis_measurements_total",
		Help: "Measurements of AppRollouts' analyses, by verdict (Successful, Failed, Inconclusive, Error).",
	}, []string{"phase"})
	// AppCanarySteps counts the canary steps rollouts moved to, by weight.
	AppCanarySteps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upshift_app_canary_steps_total",
		Help: "Canary steps AppRollouts moved to, by weight (percent).",
	}, []string{"weight"})
)

func appCollectors() []prometheus.Collector {
	return []prometheus.Collector{AppRollouts, AppTransitions, AppMeasurements, AppCanarySteps}
}

// appsCollector counts rollouts by phase at scrape time from what the
// reconciler last saved, so a rollout counts in one phase only.
type appsCollector struct {
	mu     sync.Mutex
	phases map[string]v1alpha1.AppPhase
}

var appsDesc = prometheus.NewDesc("upshift_app_rollouts", "AppRollouts this controller reconciles, by phase.", []string{"phase"}, nil)

// SetApp records where a rollout (namespace/name) stands; "" forgets it.
func SetApp(key string, phase v1alpha1.AppPhase) {
	c := AppRollouts
	c.mu.Lock()
	defer c.mu.Unlock()
	if phase == "" {
		delete(c.phases, key)
		return
	}
	c.phases[key] = phase
}

func (c *appsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- appsDesc }

func (c *appsCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	counts := map[v1alpha1.AppPhase]int{}
	for _, p := range c.phases {
		counts[p]++
	}
	c.mu.Unlock()
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(appsDesc, prometheus.GaugeValue, float64(n), string(p))
	}
}
