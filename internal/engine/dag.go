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
//
// Beside a stage's gate it also returns the next stage's backup
// (backupAhead): a backup changes nothing, so it is taken while the gates
// run, and the next stage's steps start as soon as both are done.
func NextActions(r *v1alpha1.UpgradeRun) []Action {
	a := Next(r)
	if a.Kind == CheckGate && backupAhead(r, a.Stage, a.Index) {
		return []Action{a, {Kind: Backup, Stage: a.Stage + 1}}
	}
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

// backupAhead tells whether the stage after stage i may take its backup
// while stage i's gate j runs: the run goes forward, gate j is the
// stage's last (an earlier gate's failure would leave a backup of a stage
// that never starts), the next stage has not begun (or was backing up
// when a process stopped, with no backup found), and gate j is not a
// soak: a soak lasts as long as the plan says, and a snapshot taken at
// its start would be that old when the stage's steps change what it
// holds. If gate j fails, the backup is dropped (Cancel).
func backupAhead(r *v1alpha1.UpgradeRun, i, j int) bool {
	gates := r.Spec.Plan.Stages[i].Gates
	if r.Status.Phase != v1alpha1.RunRunning || i+1 >= len(r.Status.Stages) || j != len(gates)-1 || gates[j].Soak != nil {
		return false
	}
	next := &r.Status.Stages[i+1]
	return next.Backup == nil && (next.Phase == v1alpha1.PhasePending || next.Phase == v1alpha1.PhaseBackingUp)
}

// cancelledMessage is the message of a step stopped because another step
// of its stage failed: it failed, but is not where the run failed.
const cancelledMessage = "cancelled: another step of the stage failed"

// Cancel records that a step running beside a failed one was stopped. The
// stage has failed already; this only closes the step's record. A backup
// taken ahead of its stage (backupAhead) and stopped because a gate
// before it failed puts the stage back as not begun: none of its steps
// ran, so there is nothing of it to undo, and a later backup of it writes
// over whatever the stopped one left.
func Cancel(r *v1alpha1.UpgradeRun, a Action, now time.Time) {
	if a.Kind == Backup {
		r.Status.Transitions++
		ss := &r.Status.Stages[a.Stage]
		ss.Phase, ss.StartedAt, ss.Message = v1alpha1.PhasePending, nil, "backup stopped: an earlier stage failed"
		locate(r)
		return
	}
	r.Status.Transitions++
	st := &r.Status.Stages[a.Stage].Steps[a.Index]
	st.Phase = v1alpha1.PhaseFailed
	st.FinishedAt = ptrTime(now)
	st.Message = cancelledMessage
	locate(r)
}
