package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/conditions"
	"github.com/upshift-dev/upshift/internal/redact"
)

// PlannedRun is a run a phase will drive, known before the run exists:
// a hop of the infrastructure upgrade, or the app plan.
type PlannedRun struct {
	// Run is the run's name (the plan's name).
	Run string `json:"run"`
	// Version is what the run reaches; From where it starts ("" for an
	// install or the app).
	Version string `json:"version"`
	From    string `json:"from,omitempty"`
	// Stages are the plan's stage names, the components shown before
	// the run has a status.
	Stages []string `json:"stages"`
}

// maxLogSize bounds Progress.Logs, as embedded-cluster bounds its logs
// (cut from the front, the newest kept).
const maxLogSize = 64 << 10

// progress composes a phase's Progress from its planned runs and the
// runs as stored (nil when not started). overall is the phase's status,
// which the caller knows from the wizard's state.
func progress(planned []PlannedRun, runs map[string]*v1alpha1.UpgradeRun, overall Status) Progress {
	p := Progress{Components: []Component{}, Runs: []string{}, Status: overall}
	var logs strings.Builder
	for _, pr := range planned {
		p.Runs = append(p.Runs, pr.Run)
		prefix := ""
		if len(planned) > 1 {
			prefix = pr.Version + ": "
		}
		r := runs[pr.Run]
		if r == nil || len(r.Status.Stages) == 0 {
			for _, s := range pr.Stages {
				p.Components = append(p.Components, Component{Name: prefix + s, Status: Status{State: StatePending, Description: "Pending", LastUpdated: overall.LastUpdated}})
			}
			continue
		}
		for _, ss := range r.Status.Stages {
			p.Components = append(p.Components, Component{Name: prefix + ss.Name, Status: stageStatus(r, ss, overall.LastUpdated)})
			writeStageLogs(&logs, ss)
		}
		if r.Status.Failure != "" {
			fmt.Fprintf(&logs, "[%s] %s\n", r.Name, r.Status.Failure)
		}
		if p.Waiting == nil {
			p.Waiting = waitingOf(r)
		}
	}
	p.Logs = truncateLogs(redact.Text(logs.String()))
	return p
}

// stageStatus maps a stage's phase on embedded-cluster's four states;
// the description keeps Upshift's phase and message.
func stageStatus(r *v1alpha1.UpgradeRun, ss v1alpha1.StageStatus, fallback time.Time) Status {
	st := Status{LastUpdated: fallback, Description: string(ss.Phase)}
	switch {
	case ss.FinishedAt != nil:
		st.LastUpdated = ss.FinishedAt.Time
	case ss.StartedAt != nil:
		st.LastUpdated = ss.StartedAt.Time
	}
	switch ss.Phase {
	case v1alpha1.PhasePending, "":
		st.State, st.Description = StatePending, "Pending"
	case v1alpha1.PhaseSucceeded:
		st.State = StateSucceeded
	case v1alpha1.PhaseWarned:
		st.State, st.Description = StateSucceeded, "Succeeded with warnings"
	case v1alpha1.PhaseBackingUp:
		st.State, st.Description = StateRunning, "Backing up"
	case v1alpha1.PhaseRunning, v1alpha1.PhaseGating:
		st.State = StateRunning
		if r.Status.Stage == ss.Name && r.Status.Step != "" {
			st.Description = fmt.Sprintf("%s: %s", ss.Phase, r.Status.Step)
		}
	case v1alpha1.PhaseRollingBack:
		st.State, st.Description = StateRunning, "Rolling back"
	case v1alpha1.PhaseRolledBack:
		st.State, st.Description = StateFailed, "Rolled back, restore verified"
	case v1alpha1.PhaseSkipped:
		st.State, st.Description = StateFailed, "Rolled back (nothing to undo)"
	case v1alpha1.PhaseRollbackErr:
		st.State, st.Description = StateFailed, "Rollback failed: an operator must act"
	default: // Failed
		st.State = StateFailed
	}
	if msg := strings.TrimPrefix(ss.Message, "restored and verified"); strings.TrimLeft(msg, ": ") != "" && st.State != StatePending {
		st.Description += ": " + redact.Text(strings.TrimLeft(msg, ": "))
	}
	return st
}

// writeStageLogs appends a stage's messages, one line per step and gate
// that has one.
func writeStageLogs(b *strings.Builder, ss v1alpha1.StageStatus) {
	if ss.Message != "" {
		fmt.Fprintf(b, "[%s] %s\n", ss.Name, ss.Message)
	}
	for _, group := range [][]v1alpha1.StepStatus{ss.Steps, ss.Gates} {
		for _, s := range group {
			if s.Phase == v1alpha1.PhasePending || s.Phase == "" {
				continue
			}
			line := fmt.Sprintf("[%s] %s: %s", ss.Name, s.Name, s.Phase)
			if s.Message != "" {
				line += ": " + s.Message
			}
			b.WriteString(line + "\n")
		}
	}
}

// truncateLogs keeps the newest maxLogSize bytes, marked as
// embedded-cluster marks them.
func truncateLogs(s string) string {
	if len(s) <= maxLogSize {
		return s
	}
	cut := s[len(s)-maxLogSize:]
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
		cut = cut[i+1:]
	}
	return "... (truncated) " + cut
}

// summary is a run's line of the runs list.
func summary(r *v1alpha1.UpgradeRun) RunSummary {
	st := r.Status
	s := RunSummary{
		Name: r.Name, Plan: r.Name, Version: r.Spec.Plan.Version, FromVersion: r.Spec.FromVersion,
		Phase: string(st.Phase), Stage: st.Stage, Step: st.Step,
		Message: redact.Text(st.Message), Failure: redact.Text(st.Failure),
		Transitions: st.Transitions, Attempt: st.Attempt,
	}
	if s.Phase == "" {
		s.Phase = string(v1alpha1.RunPending)
	}
	if st.StartedAt != nil {
		t := st.StartedAt.Time
		s.StartedAt = &t
		end := time.Now()
		if st.FinishedAt != nil {
			f := st.FinishedAt.Time
			s.FinishedAt, end = &f, f
		}
		s.DurationSeconds = end.Sub(t).Round(time.Millisecond).Seconds()
	}
	s.Waiting = waitingOf(r)
	return s
}

// waitingOf is the approval the run waits at, with the message its plan
// gives the approver; nil when it waits at none.
func waitingOf(r *v1alpha1.UpgradeRun) *Waiting {
	step := conditions.WaitingStep(r)
	if step == "" {
		return nil
	}
	w := &Waiting{Run: r.Name, Step: step}
	for _, st := range r.Spec.Plan.Stages {
		for _, sd := range st.Steps {
			if sd.Name == step && sd.Approval != nil {
				w.Message = redact.Text(sd.Approval.Message)
			}
		}
	}
	return w
}
