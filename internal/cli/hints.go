package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/report"
)

// The engine and the runner record facts; the commands to type are this
// driver's own, rendered here from phases, step kinds and typed hints.

// decisionHint names the command behind an apply decision's next action,
// to follow its reason ("" when there is none).
func decisionHint(d engine.Decision) string {
	switch d.Next {
	case engine.FinishRun:
		return fmt.Sprintf(" (upshift apply, retry, rollback or abort %s)", d.Run)
	case engine.RollBackRun:
		return fmt.Sprintf(" (upshift rollback %s)", d.Run)
	case engine.RetryRun:
		return " (apply --retry starts a new attempt)"
	}
	return ""
}

// withDecisionHint adds the decision's command to a refusal.
func withDecisionHint(err error, d engine.Decision) error {
	if h := decisionHint(d); h != "" {
		return fmt.Errorf("%w%s", err, h)
	}
	return err
}

// withApprovalHint adds, to a refused approval, the commands that do
// what the operator may have meant: approve the one that waits, or one
// ahead of the run, by name.
func withApprovalHint(err error, run string) error {
	var refused *engine.ApprovalRefused
	if !errors.As(err, &refused) {
		return err
	}
	var hint string
	switch refused.Reason {
	case engine.NotWaiting, engine.NoSuchApproval:
		if open := approvable(refused.Steps, false); len(open) > 0 {
			hint = "to approve a step ahead of the run (it will not stop there), name it: " + approveCommand(run, open)
		}
	case engine.SeveralWaiting:
		hint = "name the one to approve: " + approveCommand(run, approvable(refused.Steps, true))
	case engine.RunOver:
		if refused.Phase == v1alpha1.RunRolledBack {
			hint = "upshift apply -f with the same plan and --retry starts a new attempt"
		}
	}
	if hint == "" {
		return err
	}
	return fmt.Errorf("%w\n%s", err, hint)
}

// approveCommand is `upshift approve RUN --step S` for one of steps.
func approveCommand(run string, steps []string) string {
	if len(steps) == 1 {
		return fmt.Sprintf("upshift approve %s --step %s", run, steps[0])
	}
	return fmt.Sprintf("upshift approve %s --step STEP, with STEP one of %s", run, strings.Join(steps, ", "))
}

// approvable lists the approval steps that may still be approved: those
// the run waits at (waiting) or those it has not reached (!waiting).
func approvable(steps []engine.ApprovalStep, waiting bool) []string {
	var names []string
	for _, s := range steps {
		if s.Approval == nil && s.Waiting() == waiting && s.Phase != v1alpha1.PhaseSucceeded {
			names = append(names, s.Name)
		}
	}
	return names
}

// stepMessage is a step's recorded message; at an approval step the run
// waits at, it also says how to approve.
func stepMessage(r *v1alpha1.UpgradeRun, stage, i int) string {
	st := r.Status.Stages[stage].Steps[i]
	if !waitsForApproval(r, stage, i) {
		return st.Message
	}
	if a, ok := engine.Approved(r, st.Name); ok {
		return fmt.Sprintf("%s (approved by %s)", st.Message, a.By)
	}
	if msg := r.Spec.Plan.Stages[stage].Steps[i].Approval.Message; msg != "" {
		return fmt.Sprintf("%s (waiting for approval: upshift approve %s)", msg, r.Name)
	}
	return "waiting for approval: upshift approve " + r.Name
}

// waitsForApproval: the step is an approval step and the run waits there.
func waitsForApproval(r *v1alpha1.UpgradeRun, stage, i int) bool {
	if stage >= len(r.Spec.Plan.Stages) || i >= len(r.Spec.Plan.Stages[stage].Steps) ||
		r.Spec.Plan.Stages[stage].Steps[i].Approval == nil {
		return false
	}
	switch r.Status.Phase {
	case v1alpha1.RunRunning, v1alpha1.RunPending, v1alpha1.RunAborted:
	default:
		return false
	}
	return r.Status.Stages[stage].Steps[i].Phase == v1alpha1.PhaseRunning
}

// waitingApproval names the approval step the run waits at, or "".
func waitingApproval(r *v1alpha1.UpgradeRun) string {
	for i, ss := range r.Status.Stages {
		for j := range ss.Steps {
			if waitsForApproval(r, i, j) {
				return ss.Steps[j].Name
			}
		}
	}
	return ""
}

// runHint says which command moves a run on that no process drives now
// (`upshift status`); "" for a run that needs nothing.
func runHint(r *v1alpha1.UpgradeRun) string {
	switch r.Status.Phase {
	case v1alpha1.RunRunning, v1alpha1.RunPending:
		if s := waitingApproval(r); s != "" {
			if _, ok := engine.Approved(r, s); ok {
				return "approved; `upshift apply -f` with the same plan goes on"
			}
			return fmt.Sprintf("waiting for approval of step %s: `upshift approve %s`, then `upshift apply -f` with the same plan goes on", s, r.Name)
		}
		return "not driven by any process: `upshift apply -f` with the same plan resumes it"
	case v1alpha1.RunRollingBack:
		return fmt.Sprintf("not driven by any process: `upshift rollback %s` resumes the rollback", r.Name)
	case v1alpha1.RunAborted:
		return fmt.Sprintf("resume with `upshift apply -f` and the same plan, or undo with `upshift rollback %s`", r.Name)
	case v1alpha1.RunFailed:
		return fmt.Sprintf("an operator must act: `upshift retry %s` after fixing the cause, or `upshift rollback %s`", r.Name, r.Name)
	case v1alpha1.RunRollbackFailed:
		return fmt.Sprintf("an operator must act: fix the cause (`upshift backup show %s`), then `upshift rollback %s` again", r.Name, r.Name)
	case v1alpha1.RunRolledBack:
		return "`upshift apply -f` with the same plan and --retry starts a new attempt"
	}
	return ""
}

// reportCommand is this driver's command for a report's next action (""
// for one that no command does, such as reading the warnings).
func reportCommand(a report.Action) string {
	switch a.Kind {
	case report.Approve:
		return approveCommand(a.Run, []string{a.Step})
	case report.Resume:
		return "upshift apply -f PLAN"
	case report.NewAttempt:
		return "upshift apply --retry -f PLAN"
	case report.Retry:
		return "upshift retry " + a.Run
	case report.RollBack:
		return "upshift rollback " + a.Run
	case report.InspectBackup:
		return "upshift backup show " + a.Run
	case report.Watch:
		return "upshift status " + a.Run
	}
	return ""
}
