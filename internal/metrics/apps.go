package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The app layer's metrics: AppRollouts by phase, the phases they enter,
// their analyses' measurements and their rollbacks. By phase and verdict,
// not by rollout: ten thousand rollouts must not make ten thousand series.
var (
	// AppRollouts counts the AppRollouts this controller reconciles, by
	// phase (SetApp).
	AppRollouts = newPhases("upshift_app_rollouts", "AppRollouts this controller reconciles, by phase.",
		v1alpha1.AppPending, v1alpha1.AppMigrating, v1alpha1.AppDeploying, v1alpha1.AppHealthChecking,
		v1alpha1.AppHealthy, v1alpha1.AppFailed, v1alpha1.AppRolledBack)
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

// SetApp records where a rollout (namespace/name) stands; "" forgets it.
func SetApp(key string, phase v1alpha1.AppPhase) { AppRollouts.set(key, phase) }
