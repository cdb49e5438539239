package engine

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Outcome is what acting on an action produced.
type Outcome struct {
	OK      bool
	Message string
	// Again, when positive, says a step is still running: the driver asks
	// it again after Again, and records only its Message (Progress).
	Again time.Duration
	// Backup is set by a successful Backup action.
	Backup *v1alpha1.BackupRef
	// Rollback is set by a Restore action (also when it failed).
	Rollback *v1alpha1.Rollback
}

// Begin records that the action starts. The driver saves the run before
// acting, so a crash during the action re-enters it.
func Begin(r *v1alpha1.UpgradeRun, a Action, now time.Time) {
	t := metav1.NewMicroTime(now)
	st := &r.Status
	st.Transitions++
	ss := &st.Stages[a.Stage]
	switch a.Kind {
	case Backup:
		if ss.Phase != v1alpha1.PhaseBackingUp { // not a resumed backup
			ss.Attempts++
			ss.StartedAt = &t
			ss.FinishedAt = nil
		}
		ss.Phase = v1alpha1.PhaseBackingUp
		ss.Message = "backing up"
	case RunStep:
		st := &ss.Steps[a.Index]
		begin(st, &t)
		switch spec := r.Spec.Plan.Stages[a.Stage].Steps[a.Index]; {
		case spec.Approval != nil:
			// A fact, not a command: each driver says how to approve.
			st.Message = "waiting for approval"
			if spec.Approval.Message != "" {
				st.Message = spec.Approval.Message + " (" + st.Message + ")"
			}
		case spec.Pause != nil:
			st.Message = fmt.Sprintf("paused until %s", st.StartedAt.Add(spec.Pause.Duration.Duration).UTC().Format(time.RFC3339))
		}
	case CheckGate:
		ss.Phase = v1alpha1.PhaseGating
		begin(&ss.Gates[a.Index], &t)
		if sk := r.Spec.Plan.Stages[a.Stage].Gates[a.Index].Soak; sk != nil {
			ss.Gates[a.Index].Message = fmt.Sprintf("soaking until %s", ss.Gates[a.Index].StartedAt.Add(sk.Duration.Duration).UTC().Format(time.RFC3339))
		}
	case Restore:
		ss.Phase = v1alpha1.PhaseRollingBack
		ss.Message = "restoring from backup"
	}
	locate(r)
}

func begin(s *v1alpha1.StepStatus, t *metav1.MicroTime) {
	s.Phase = v1alpha1.PhaseRunning
	s.Attempts++
	// StartedAt is the first start: a resumed pause counts from it, and
	// elapsed times include the interruption.
	if s.StartedAt == nil || s.FinishedAt != nil {
		s.StartedAt = t
	}
	s.FinishedAt = nil
	s.Message = ""
	if s.Attempts > 1 {
		s.Message = fmt.Sprintf("attempt %d", s.Attempts)
	}
}

// Complete records the outcome of an action and settles the run's phase.
func Complete(r *v1alpha1.UpgradeRun, a Action, o Outcome, now time.Time) {
	t := metav1.NewMicroTime(now)
	st := &r.Status
	st.Transitions++
	ss := &st.Stages[a.Stage]
	spec := r.Spec.Plan.Stages[a.Stage]
	switch a.Kind {
	case Backup:
		if o.OK {
			ss.Backup = o.Backup
			ss.Phase = v1alpha1.PhaseRunning
			ss.Message = ""
		} else {
			failStage(r, a.Stage, "backup failed, nothing was changed: "+o.Message, &t)
		}
	case RunStep:
		s := &ss.Steps[a.Index]
		finish(s, o, &t)
		if !o.OK {
			failStage(r, a.Stage, fmt.Sprintf("step %s failed: %s", spec.Steps[a.Index].Name, o.Message), &t)
		}
	case CheckGate:
		g := &ss.Gates[a.Index]
		finish(g, o, &t)
		if !o.OK {
			if sev := spec.Gates[a.Index].Severity; sev == v1alpha1.SeverityWarning || sev == v1alpha1.SeverityInfo {
				// Recorded and shown; the stage goes on.
				g.Phase = v1alpha1.PhaseWarned
				g.Message = string(sev) + ": " + o.Message
				break
			}
			failStage(r, a.Stage, fmt.Sprintf("gate %s failed: %s", g.Name, o.Message), &t)
		}
	case Restore:
		ss.Rollback = o.Rollback
		ss.FinishedAt = &t
		if o.OK {
			ss.Phase = v1alpha1.PhaseRolledBack
			ss.Message = "restored and verified"
			if o.Message != "" {
				ss.Message += ": " + o.Message
			}
		} else {
			ss.Phase = v1alpha1.PhaseRollbackErr
			ss.Message = "rollback failed: " + o.Message
		}
	}
	settle(r, &t)
}

func finish(s *v1alpha1.StepStatus, o Outcome, t *metav1.MicroTime) {
	s.FinishedAt = t
	s.Message = o.Message
	if o.OK {
		s.Phase = v1alpha1.PhaseSucceeded
	} else {
		s.Phase = v1alpha1.PhaseFailed
	}
}

// failStage marks the stage failed and decides what the run does next.
func failStage(r *v1alpha1.UpgradeRun, i int, msg string, t *metav1.MicroTime) {
	ss := &r.Status.Stages[i]
	ss.Phase = v1alpha1.PhaseFailed
	ss.FinishedAt = t
	ss.Message = msg
	r.Status.Failure = fmt.Sprintf("stage %s: %s", ss.Name, msg)
	r.Status.Message = r.Status.Failure
	if AutoRollback(r) {
		r.Status.RollbackRequested = true
		r.Status.Phase = v1alpha1.RunRollingBack
		return
	}
	r.Status.Phase = v1alpha1.RunFailed
	r.Status.FinishedAt = t
}

// AutoRollback is the plan's autoRollback, true when unset.
func AutoRollback(r *v1alpha1.UpgradeRun) bool {
	return r.Spec.Plan.AutoRollback == nil || *r.Spec.Plan.AutoRollback
}

// settle derives stage and run phases that follow from the others, so a
// run never rests in a state that needs no IO to leave.
func settle(r *v1alpha1.UpgradeRun, t *metav1.MicroTime) {
	defer locate(r)
	st := &r.Status
	for i := range st.Stages {
		settleStage(&st.Stages[i], t)
	}
	switch st.Phase {
	case v1alpha1.RunRunning:
		for _, ss := range st.Stages {
			if ss.Phase != v1alpha1.PhaseSucceeded {
				return
			}
		}
		st.Phase = v1alpha1.RunSucceeded
		st.Message = fmt.Sprintf("reached version %s", r.Spec.Plan.Version)
		st.FinishedAt = t
	case v1alpha1.RunRollingBack:
		settleRollback(st, t)
	}
}

// settleStage marks a stage succeeded once its steps and gates have.
func settleStage(ss *v1alpha1.StageStatus, t *metav1.MicroTime) {
	switch ss.Phase {
	case v1alpha1.PhaseRunning, v1alpha1.PhaseGating:
	default:
		return
	}
	for _, s := range ss.Steps {
		if s.Phase != v1alpha1.PhaseSucceeded {
			return
		}
	}
	for _, g := range ss.Gates {
		if !gateDone(g.Phase) {
			return
		}
	}
	ss.Phase = v1alpha1.PhaseSucceeded
	ss.FinishedAt = t
	ss.Message = ""
}

func settleRollback(st *v1alpha1.RunStatus, t *metav1.MicroTime) {
	var undone []string
	for i := len(st.Stages) - 1; i >= 0; i-- {
		ss := &st.Stages[i]
		if ss.Phase == v1alpha1.PhaseRollbackErr {
			st.Phase = v1alpha1.RunRollbackFailed
			st.FinishedAt = t
			st.Message = withOutcome(failureOf(st), fmt.Sprintf("rolling back stage %s failed: %s", ss.Name, strings.TrimPrefix(ss.Message, "rollback failed: ")))
			return
		}
	}
	if nextToRestore(st) >= 0 {
		return
	}
	for i := len(st.Stages) - 1; i >= 0; i-- {
		ss := &st.Stages[i]
		switch {
		case ss.Phase == v1alpha1.PhaseRolledBack:
			undone = append(undone, ss.Name)
		case ss.Backup == nil && ss.Phase != v1alpha1.PhasePending && ss.Phase != v1alpha1.PhaseSkipped:
			ss.Phase = v1alpha1.PhaseSkipped
			ss.Message = "nothing to undo: no change was made"
		case ss.Backup != nil && emptyBackup(ss.Backup) && ss.Phase != v1alpha1.PhaseSkipped:
			ss.Phase = v1alpha1.PhaseSkipped
			ss.Message = "nothing to undo: the stage touches no object"
		}
	}
	st.Phase = v1alpha1.RunRolledBack
	st.RollbackRequested = false
	st.FinishedAt = t
	if len(undone) == 0 {
		st.Message = withOutcome(failureOf(st), "nothing needed undoing")
		return
	}
	st.Message = withOutcome(failureOf(st), fmt.Sprintf("rolled back %s; restore verified", strings.Join(undone, ", ")))
}

// withOutcome is the failure that started a rollback with what the
// rollback did, at the end of the failure's first line. A failure may go
// on with a container's last log lines: appended after them, the outcome
// read as one of them, and every view that shows a message's first line
// (an event list, a condition's column) left it out.
func withOutcome(failure, outcome string) string {
	head, detail, multiline := strings.Cut(failure, "\n")
	if !multiline {
		return failure + "; " + outcome
	}
	return head + "; " + outcome + "\n" + detail
}

// failureOf is what stopped the run.
func failureOf(st *v1alpha1.RunStatus) string {
	if st.Failure != "" {
		return st.Failure
	}
	return "rollback requested"
}

// gateDone: the gate passed, or did not and is not blocking.
func gateDone(p v1alpha1.Phase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseWarned
}
