package controller

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
)

// Note is one Kubernetes event to record on a plan.
type Note struct {
	Type, Reason, Message string
}

// Event reasons, in the UpperCamelCase Kubernetes uses.
const (
	ReasonRunStarted      = "RunStarted"
	ReasonStageSucceeded  = "StageSucceeded"
	ReasonStepFailed      = "StepFailed"
	ReasonGateFailed      = "GateFailed"
	ReasonBackupFailed    = "BackupFailed"
	ReasonStageRestored   = "StageRestored"
	ReasonRestoreFailed   = "RestoreFailed"
	ReasonApprovalWaiting = "WaitingForApproval"
	ReasonActionRefused   = "ActionRefused"
	ReasonActionTaken     = "ActionTaken"
)

// maxNote bounds an event's message: the API server keeps at most 1 KiB
// of an event's note. The end of a failure (the log tail) matters most,
// so the middle goes.
const maxNote = 1024

// NotesFor says which events a saved transition makes. Only transitions
// that matter to a person make one: the run's start and end, a stage done,
// a failure with its cause, a rollback's result, an approval awaited.
// Step starts and successes do not (status shows them): events are a log
// for people, not a trace. before is the run's phase before the
// transition. Every message is redacted.
func NotesFor(e engine.Event, before v1alpha1.RunPhase) []Note {
	r := e.Run
	a := e.Action
	var notes []Note
	add := func(typ, reason, msg string) {
		notes = append(notes, Note{Type: typ, Reason: reason, Message: clip(redact.Text(msg))})
	}
	if a.Stage < 0 || a.Stage >= len(r.Status.Stages) {
		return nil
	}
	stage := r.Status.Stages[a.Stage]
	if e.Progress {
		return nil // the record shows how far the step is; no event each time
	}
	if e.Begin {
		// A run's first Begin, or that of a rolled-back run started over
		// (only a new attempt leaves RolledBack for Running).
		if before == v1alpha1.RunPending || before == "" || before == v1alpha1.RunRolledBack && r.Status.Phase == v1alpha1.RunRunning {
			add(corev1.EventTypeNormal, ReasonRunStarted, fmt.Sprintf("run %s started (attempt %d): %d stages to version %s", r.Name, max(r.Status.Attempt, 1), len(r.Status.Stages), r.Spec.Plan.Version))
		}
		if a.Kind == engine.RunStep && a.Index < len(stage.Steps) && waitsForApproval(r, a.Stage, a.Index) {
			add(corev1.EventTypeNormal, ReasonApprovalWaiting, fmt.Sprintf("step %s of stage %s waits for an approval: annotate %s=%s", stage.Steps[a.Index].Name, stage.Name, v1alpha1.AnnotationApprove, stage.Steps[a.Index].Name))
		}
		return notes
	}
	switch {
	case e.Outcome.OK && a.Kind == engine.Restore:
		add(corev1.EventTypeNormal, ReasonStageRestored, fmt.Sprintf("stage %s restored from its backup and verified", stage.Name))
	case !e.Outcome.OK:
		reason, what := ReasonStepFailed, ""
		switch a.Kind {
		case engine.Backup:
			reason, what = ReasonBackupFailed, "backup"
		case engine.RunStep:
			what = "step " + stepName(stage.Steps, a.Index)
		case engine.CheckGate:
			reason, what = ReasonGateFailed, "gate "+stepName(stage.Gates, a.Index)
		case engine.Restore:
			reason, what = ReasonRestoreFailed, "rollback"
		}
		add(corev1.EventTypeWarning, reason, fmt.Sprintf("stage %s: %s failed: %s", stage.Name, what, e.Outcome.Message))
	}
	if (a.Kind == engine.RunStep || a.Kind == engine.CheckGate) && stage.Phase == v1alpha1.PhaseSucceeded {
		// Only the stage's last step or gate completes it (also a gate of
		// warning severity that failed: the stage goes on).
		add(corev1.EventTypeNormal, ReasonStageSucceeded, fmt.Sprintf("stage %s succeeded", stage.Name))
	}
	if r.Status.Phase != before && r.Status.Phase != v1alpha1.RunRunning {
		typ := corev1.EventTypeNormal
		switch r.Status.Phase {
		case v1alpha1.RunFailed, v1alpha1.RunRollbackFailed, v1alpha1.RunRolledBack, v1alpha1.RunRollingBack:
			typ = corev1.EventTypeWarning
		}
		msg := fmt.Sprintf("run %s %s", r.Name, phaseWords(r.Status.Phase))
		if r.Status.Message != "" {
			msg += ": " + r.Status.Message
		}
		add(typ, string(r.Status.Phase), msg)
	}
	return notes
}

// phaseWords says a run's new phase in words ("rolled back").
func phaseWords(p v1alpha1.RunPhase) string {
	switch p {
	case v1alpha1.RunRollingBack:
		return "is rolling back"
	case v1alpha1.RunRolledBack:
		return "rolled back"
	case v1alpha1.RunRollbackFailed:
		return "failed to roll back"
	}
	return strings.ToLower(string(p))
}

// waitsForApproval tells an approval step nobody approved yet.
func waitsForApproval(r *v1alpha1.UpgradeRun, stage, index int) bool {
	if stage >= len(r.Spec.Plan.Stages) || index >= len(r.Spec.Plan.Stages[stage].Steps) {
		return false
	}
	s := r.Spec.Plan.Stages[stage].Steps[index]
	if s.Approval == nil {
		return false
	}
	_, approved := engine.Approved(r, s.Name)
	return !approved
}

func stepName(steps []v1alpha1.StepStatus, i int) string {
	if i < len(steps) {
		return steps[i].Name
	}
	return fmt.Sprint(i)
}

// clip keeps an event's message within maxNote, cutting its middle.
func clip(s string) string {
	if len(s) <= maxNote {
		return s
	}
	const cut = " … "
	head := maxNote / 3
	tail := maxNote - head - len(cut)
	return strings.ToValidUTF8(s[:head], "") + cut + strings.ToValidUTF8(s[len(s)-tail:], "")
}
