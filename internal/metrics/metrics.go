// Package metrics holds every Prometheus metric Upshift exports,
// registered once: the upgrade engine's in this file, the fleet's (plugin
// calls and operations) in fleet.go, the app layer's in apps.go. The controller serves them on
// --metrics-addr with controller-runtime's own (reconcile totals and
// errors, work queue depth); config/grafana/upshift-dashboard.json charts
// the engine's.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// Buckets of step and stage durations: from a quick apply (0.1 s) to a
// long migration or soak (an hour).
var durationBuckets = prometheus.ExponentialBucketsRange(0.1, 3600, 16)

var (
	// StepDuration is how long steps and gates took, by kind and outcome
	// (succeeded, failed).
	StepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "upshift_step_duration_seconds",
		Help:    "Duration of steps and gates, by kind (crds, helm, ready, ...) and outcome (succeeded, failed).",
		Buckets: durationBuckets,
	}, []string{"kind", "outcome"})
	// StageDuration is how long stages took from backup to last gate.
	StageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "upshift_stage_duration_seconds",
		Help:    "Duration of stages from their backup to their last gate, by outcome (succeeded, failed).",
		Buckets: durationBuckets,
	}, []string{"outcome"})
	// GateFailures counts gates that failed, by kind.
	GateFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upshift_gate_failures_total",
		Help: "Gates that failed, by kind.",
	}, []string{"kind"})
	// Rollbacks counts stage restores, by outcome (verified, failed).
	Rollbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upshift_rollbacks_total",
		Help: "Stage rollbacks, by outcome: verified (restored and read back equal) or failed.",
	}, []string{"outcome"})
	// Transitions counts saved transitions, by event (begin, succeeded,
	// failed) and action kind (backup, step, gate, restore).
	Transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upshift_transitions_total",
		Help: "Saved run transitions, by event (begin, succeeded, failed) and action (backup, step, gate, restore).",
	}, []string{"event", "action"})

	// Runs reports the runs of the plans this process reconciles, by
	// phase (see SetRun).
	Runs = newPhases("upshift_runs", "Runs of the plans this controller reconciles, by phase.",
		v1alpha1.RunPending, v1alpha1.RunRunning, v1alpha1.RunSucceeded, v1alpha1.RunFailed,
		v1alpha1.RunRollingBack, v1alpha1.RunRolledBack, v1alpha1.RunRollbackFailed, v1alpha1.RunAborted)
)

var register sync.Once

// Register adds every metric to reg; later calls do nothing.
func Register(reg prometheus.Registerer) {
	register.Do(func() {
		reg.MustRegister(StepDuration, StageDuration, GateFailures, Rollbacks, Transitions, Runs)
		reg.MustRegister(fleetCollectors()...)
		reg.MustRegister(appCollectors()...)
	})
}

// Observe counts a saved transition.
func Observe(e engine.Event) {
	r := e.Run
	a := e.Action
	if a.Stage < 0 || a.Stage >= len(r.Status.Stages) {
		return
	}
	event := "begin"
	switch {
	case e.Progress:
		event = "progress"
	case !e.Begin:
		event = outcome(e.Outcome.OK)
	}
	Transitions.WithLabelValues(event, string(a.Kind)).Inc()
	if e.Begin || e.Progress {
		return
	}
	spec := r.Spec.Plan.Stages
	stage := &r.Status.Stages[a.Stage]
	switch a.Kind {
	case engine.RunStep:
		if a.Index < len(stage.Steps) && a.Stage < len(spec) && a.Index < len(spec[a.Stage].Steps) {
			observeDuration(StepDuration.WithLabelValues(spec[a.Stage].Steps[a.Index].Kind(), event), stage.Steps[a.Index])
		}
	case engine.CheckGate:
		if a.Index < len(stage.Gates) && a.Stage < len(spec) && a.Index < len(spec[a.Stage].Gates) {
			kind := spec[a.Stage].Gates[a.Index].Kind()
			observeDuration(StepDuration.WithLabelValues(kind, event), stage.Gates[a.Index])
			if !e.Outcome.OK {
				GateFailures.WithLabelValues(kind).Inc()
			}
		}
	case engine.Restore:
		Rollbacks.WithLabelValues(map[bool]string{true: "verified", false: "failed"}[e.Outcome.OK]).Inc()
	}
	if a.Kind != engine.Restore && (stage.Phase == v1alpha1.PhaseSucceeded || stage.Phase == v1alpha1.PhaseFailed) && stage.StartedAt != nil && stage.FinishedAt != nil {
		StageDuration.WithLabelValues(outcome(stage.Phase == v1alpha1.PhaseSucceeded)).Observe(stage.FinishedAt.Sub(stage.StartedAt.Time).Seconds())
	}
}

func observeDuration(h prometheus.Observer, s v1alpha1.StepStatus) {
	if s.StartedAt != nil && s.FinishedAt != nil {
		h.Observe(s.FinishedAt.Sub(s.StartedAt.Time).Seconds())
	}
}

func outcome(ok bool) string {
	if ok {
		return "succeeded"
	}
	return "failed"
}

// SetRun records the phase of a plan's run ("" forgets it: the plan is
// gone).
func SetRun(run string, phase v1alpha1.RunPhase) { Runs.set(run, phase) }
