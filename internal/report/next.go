package report

import (
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// ActionKind is what an operator can do about a run. It is data: each
// driver names it in its own terms (the CLI as a command line).
type ActionKind string

const (
	// Approve the approval step the run waits at (Action.Step).
	Approve ActionKind = "approve"
	// Resume: apply the same plan again; the run goes on where it stopped.
	Resume ActionKind = "resume"
	// NewAttempt: apply the same plan again asking for a new attempt,
	// which starts over from the first stage with fresh backups.
	NewAttempt ActionKind = "new-attempt"
	// Retry the failed step of a run that was not rolled back; steps that
	// succeeded are not run again.
	Retry ActionKind = "retry"
	// RollBack every stage the run changed, last first (or resume a
	// rollback no process drives).
	RollBack ActionKind = "rollback"
	// InspectBackup: look at what a stage's backup holds.
	InspectBackup ActionKind = "inspect-backup"
	// Watch where the run is and which process drives it.
	Watch ActionKind = "watch"
	// ReviewWarnings: the run reached its version with warnings.
	ReviewWarnings ActionKind = "review-warnings"
)

// Action is one thing to do next about run Run, and why.
type Action struct {
	Kind ActionKind `json:"kind"`
	Run  string     `json:"run"`
	Step string     `json:"step,omitempty"`
	// Why is the fact that calls for the action, never a command.
	Why string `json:"why"`
}

// CommandFunc renders an action as the driver's command ("" when it has
// none for it).
type CommandFunc func(Action) string

// next is what to do about a run (already redacted) in its phase.
func next(r *v1alpha1.UpgradeRun, warnings int) []Action {
	st := r.Status
	act := func(k ActionKind, why string) Action { return Action{Kind: k, Run: r.Name, Why: why} }
	switch st.Phase {
	case v1alpha1.RunSucceeded:
		if warnings > 0 {
			return []Action{act(ReviewWarnings, fmt.Sprintf("the run reached version %s with %d warning(s), listed in this report: look into them before the next upgrade", r.Spec.Plan.Version, warnings))}
		}
		return nil
	case v1alpha1.RunRolledBack:
		return []Action{act(NewAttempt, "the run was rolled back: fix the cause this report shows, then start a new attempt of the same plan; it starts over from the first stage with fresh backups")}
	case v1alpha1.RunFailed:
		return []Action{
			act(Retry, "the run failed and was not rolled back: fix the cause this report shows, then retry the failed step; succeeded steps are not run again"),
			act(RollBack, "or undo every stage the run changed, last first"),
		}
	case v1alpha1.RunRollbackFailed:
		return []Action{
			act(InspectBackup, "the rollback failed and an operator must act: compare the backup with the cluster and fix the cause"),
			act(RollBack, "then roll back again; stages already restored are not restored twice"),
		}
	case v1alpha1.RunRollingBack:
		return []Action{
			act(Watch, "the rollback is in progress: see where it is and which process drives it"),
			act(RollBack, "if no process drives it, resume the rollback"),
		}
	case v1alpha1.RunAborted:
		return []Action{
			act(Resume, "the run was aborted, backups kept: resume it where it stopped"),
			act(RollBack, "or undo every stage it changed"),
		}
	}
	// Running or Pending.
	if step := waitingApproval(r); step != "" {
		a := act(Approve, fmt.Sprintf("the run waits for approval of step %s", step))
		a.Step = step
		return []Action{a}
	}
	if st.Phase == v1alpha1.RunPending {
		return []Action{act(Resume, "the run has not started: apply its plan again to start it")}
	}
	return []Action{
		act(Watch, "the run is in progress: see where it is and which process drives it"),
		act(Resume, "if no process drives it, apply the same plan again to resume it"),
	}
}

// waitingApproval names the approval step a running run waits at and
// nobody approved yet, or "".
func waitingApproval(r *v1alpha1.UpgradeRun) string {
	for i, ss := range r.Status.Stages {
		for j, s := range ss.Steps {
			if s.Phase != v1alpha1.PhaseRunning || approvedBy(r, s.Name) != "" {
				continue
			}
			if i < len(r.Spec.Plan.Stages) && j < len(r.Spec.Plan.Stages[i].Steps) && r.Spec.Plan.Stages[i].Steps[j].Approval != nil {
				return s.Name
			}
		}
	}
	return ""
}

// approvedBy is who approved the step, or "".
func approvedBy(r *v1alpha1.UpgradeRun, step string) string {
	for _, a := range r.Status.Approvals {
		if a.Step == step {
			return a.By
		}
	}
	return ""
}
