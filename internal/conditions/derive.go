package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// phase is the run's phase; a run not yet created or saved is Pending.
func phase(run *v1alpha1.UpgradeRun) v1alpha1.RunPhase {
	if run == nil || run.Status.Phase == "" {
		return v1alpha1.RunPending
	}
	return run.Status.Phase
}

// Ready is True once the run reached the plan's version; otherwise False,
// with the run's phase (or the approval it waits for) as the reason.
func Ready(run *v1alpha1.UpgradeRun) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse}
	switch p := phase(run); p {
	case v1alpha1.RunSucceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1alpha1.ReasonSucceeded, run.Status.Message
	case v1alpha1.RunPending, v1alpha1.RunRunning, v1alpha1.RunRollingBack:
		c.Reason, c.Message = moving(run)
	default:
		c.Reason, c.Message = string(p), run.Status.Message
	}
	if c.Message == "" {
		c.Message = "run " + string(phase(run))
	}
	return c
}

// Reconciling is present (True) while the run moves: pending, running,
// waiting at an approval or a pause (it goes on by itself once approved
// or paused long enough), rolling back.
func Reconciling(run *v1alpha1.UpgradeRun) (metav1.Condition, bool) {
	c := metav1.Condition{Type: v1alpha1.ConditionReconciling, Status: metav1.ConditionTrue}
	switch phase(run) {
	case v1alpha1.RunPending, v1alpha1.RunRunning, v1alpha1.RunRollingBack:
		c.Reason, c.Message = moving(run)
		return c, true
	}
	return c, false
}

// Stalled is present (True) when the run stopped and only a person can
// move it on: failed without rollback, rolled back, its rollback failed,
// or aborted. The reason is the run's phase, the message what stopped it.
func Stalled(run *v1alpha1.UpgradeRun) (metav1.Condition, bool) {
	c := metav1.Condition{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue}
	switch p := phase(run); p {
	case v1alpha1.RunFailed, v1alpha1.RunRolledBack, v1alpha1.RunRollbackFailed, v1alpha1.RunAborted:
		c.Reason, c.Message = string(p), run.Status.Message
		if c.Message == "" {
			c.Message = "run " + string(p)
		}
		return c, true
	}
	return c, false
}

// RolledBack is present (True) when the run failed and every stage it
// changed was restored and verified.
func RolledBack(run *v1alpha1.UpgradeRun) (metav1.Condition, bool) {
	c := metav1.Condition{Type: v1alpha1.ConditionRolledBack, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRolledBack}
	if phase(run) != v1alpha1.RunRolledBack {
		return c, false
	}
	c.Message = run.Status.Message
	if c.Message == "" {
		c.Message = "rolled back"
	}
	return c, true
}

// WaitingForApproval is present (True) while the run waits at an approval
// step nobody approved yet.
func WaitingForApproval(run *v1alpha1.UpgradeRun) (metav1.Condition, bool) {
	c := metav1.Condition{Type: v1alpha1.ConditionWaitingForApproval, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonWaitingForApproval}
	s, ok := waiting(run)
	if !ok {
		return c, false
	}
	c.Message = approvalMessage(run, s)
	return c, true
}

// WaitingStep names the approval step the run waits at, nobody having
// approved it yet; "" when it waits at none.
func WaitingStep(run *v1alpha1.UpgradeRun) string {
	s, _ := waiting(run)
	return s.Name
}

// waiting is the approval step the run waits at, if any.
func waiting(run *v1alpha1.UpgradeRun) (engine.ApprovalStep, bool) {
	if phase(run) != v1alpha1.RunRunning {
		return engine.ApprovalStep{}, false
	}
	for _, s := range engine.ApprovalSteps(run) {
		if s.Waiting() && s.Approval == nil {
			return s, true
		}
	}
	return engine.ApprovalStep{}, false
}

// moving is the reason and message of a run on the move.
func moving(run *v1alpha1.UpgradeRun) (reason, message string) {
	switch p := phase(run); {
	case run == nil:
		return v1alpha1.ReasonPending, "no run yet"
	case p == v1alpha1.RunPending:
		return v1alpha1.ReasonPending, fmt.Sprintf("run %s has not started", run.Name)
	case p == v1alpha1.RunRollingBack:
		return v1alpha1.ReasonRollingBack, "rolling back: " + run.Status.Message
	}
	if s, ok := waiting(run); ok {
		return v1alpha1.ReasonWaitingForApproval, approvalMessage(run, s)
	}
	return v1alpha1.ReasonRunning, fmt.Sprintf("run %s is at %s", run.Name, where(run.Status.Stage, run.Status.Step))
}

// approvalMessage names the step and says what the plan asks its approver
// to check. How to approve is each driver's to say.
func approvalMessage(run *v1alpha1.UpgradeRun, s engine.ApprovalStep) string {
	msg := fmt.Sprintf("step %s of stage %s waits for an approval", s.Name, s.Stage)
	for _, st := range run.Spec.Plan.Stages {
		for _, step := range st.Steps {
			if step.Name == s.Name && step.Approval != nil && step.Approval.Message != "" {
				msg += ": " + step.Approval.Message
			}
		}
	}
	return msg
}

func where(stage, step string) string {
	switch {
	case stage == "":
		return "its start"
	case step == "":
		return "stage " + stage
	}
	return fmt.Sprintf("stage %s, step %s", stage, step)
}
