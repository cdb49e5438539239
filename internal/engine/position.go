package engine

import (
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// locate records where the run is in Status.Stage and Status.Step, the
// UpgradeRun's printer columns. Every function that moves a run calls it
// last, so a saved record always says where it is.
func locate(r *v1alpha1.UpgradeRun) {
	r.Status.Stage, r.Status.Step = Position(&r.Status)
}

// Position is where a run is, or where it stopped: a stage, and in it the
// steps or gates it is at (side-by-side steps joined with commas).
//   - A stage backing up, running, gating or being restored is where the
//     run is; within it, the running steps, else the running gates.
//   - Otherwise the run stopped: at the stage that failed (or whose
//     rollback failed), at its failed steps or gates; after a rollback, at
//     the stage whose step or gate failed.
//   - Before the run starts and once it succeeded, nowhere ("", "").
func Position(st *v1alpha1.RunStatus) (stage, step string) {
	if st.Phase == v1alpha1.RunSucceeded {
		return "", ""
	}
	for _, ss := range st.Stages {
		switch ss.Phase {
		case v1alpha1.PhaseBackingUp, v1alpha1.PhaseRunning, v1alpha1.PhaseGating, v1alpha1.PhaseRollingBack:
			return ss.Name, inPhase(ss, v1alpha1.PhaseRunning)
		}
	}
	for _, ss := range st.Stages {
		if ss.Phase == v1alpha1.PhaseFailed || ss.Phase == v1alpha1.PhaseRollbackErr {
			return ss.Name, inPhase(ss, v1alpha1.PhaseFailed)
		}
	}
	for _, ss := range st.Stages {
		if failed := inPhase(ss, v1alpha1.PhaseFailed); failed != "" {
			return ss.Name, failed
		}
	}
	return "", ""
}

// inPhase names the stage's steps in phase p, else its gates in phase p.
// Steps cancelled because another one failed are not named.
func inPhase(ss v1alpha1.StageStatus, p v1alpha1.Phase) string {
	for _, list := range [][]v1alpha1.StepStatus{ss.Steps, ss.Gates} {
		var names []string
		for _, s := range list {
			if s.Phase == p && s.Message != cancelledMessage {
				names = append(names, s.Name)
			}
		}
		if len(names) > 0 {
			return strings.Join(names, ",")
		}
	}
	return ""
}
