package engine

import (
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// IsGraph reports whether a stage runs as a graph: any of its steps
// declares dependsOn. Other stages run their steps in order.
func IsGraph(st v1alpha1.Stage) bool {
	for _, s := range st.Steps {
		if len(s.DependsOn) > 0 {
			return true
		}
	}
	return false
}

// NextActions is Next, except in a graph stage: there it returns every
// step whose dependencies have succeeded and that has not (including the
// ones already running, which the driver skips when it has them in
// flight). An empty list means: wait for what is in flight.
func NextActions(r *v1alpha1.UpgradeRun) []Action {
	a := Next(r)
	if a.Kind != RunStep || !IsGraph(r.Spec.Plan.Stages[a.Stage]) {
		return []Action{a}
	}
	spec := r.Spec.Plan.Stages[a.Stage]
	ss := &r.Status.Stages[a.Stage]
	phase := map[string]v1alpha1.Phase{}
	for j, s := range spec.Steps {
		phase[s.Name] = ss.Steps[j].Phase
	}
	var ready []Action
	for j, s := range spec.Steps {
		if ss.Steps[j].Phase == v1alpha1.PhaseSucceeded {
			continue
		}
		ok := true
		for _, dep := range s.DependsOn {
			if phase[dep] != v1alpha1.PhaseSucceeded {
				ok = false
			}
		}
		if ok {
			ready = append(ready, Action{Kind: RunStep, Stage: a.Stage, Index: j})
		}
	}
	return ready
}

// cancelledMessage is the message of a step stopped because another step
// of its stage failed: it failed, but is not where the run failed.
const cancelledMessage = "cancelled: another step of the stage failed"

// Cancel records that a step running beside a failed one was stopped. The
// stage has failed already; this only closes the step's record.
func Cancel(r *v1alpha1.UpgradeRun, a Action, now time.Time) {
	r.Status.Transitions++
	st := &r.Status.Stages[a.Stage].Steps[a.Index]
	st.Phase = v1alpha1.PhaseFailed
	st.FinishedAt = ptrTime(now)
	st.Message = cancelledMessage
	locate(r)
}
