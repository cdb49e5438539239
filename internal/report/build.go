package report

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// Build is the report of one run, from its record alone. The run is read
// through redact.Run and not changed.
func Build(run *v1alpha1.UpgradeRun) Report {
	r := redact.Run(run)
	st := r.Status
	rep := Report{
		Name:       r.Name,
		PlanDigest: r.Spec.PlanDigest,
		From:       r.Spec.FromVersion,
		To:         r.Spec.Plan.Version,
		Phase:      st.Phase,
		Message:    st.Message,
		Failure:    st.Failure,
		Attempt:    st.Attempt,
		Timing:     timing(st.StartedAt, st.FinishedAt),
		Stages:     []Stage{},
	}
	if rep.From == "" {
		rep.From = UnknownVersion
	}
	for i, ss := range st.Stages {
		rep.Stages = append(rep.Stages, stage(r, ss))
		for j, g := range ss.Gates {
			gate := Gate{Stage: ss.Name, Name: g.Name, Severity: severity(r, i, j), Result: result(g.Phase),
				Attempts: g.Attempts, Timing: timing(g.StartedAt, g.FinishedAt), Message: g.Message}
			// The engine prefixes a warned gate's message with its
			// severity; the report groups by it instead.
			gate.Message = strings.TrimPrefix(gate.Message, string(gate.Severity)+": ")
			switch gate.Severity {
			case v1alpha1.SeverityWarning:
				rep.Gates.Warning = append(rep.Gates.Warning, gate)
				if gate.Result == Failed {
					rep.Warnings = append(rep.Warnings, fmt.Sprintf("stage %s: warning gate %s did not pass: %s", ss.Name, g.Name, gate.Message))
				}
			case v1alpha1.SeverityInfo:
				rep.Gates.Info = append(rep.Gates.Info, gate)
			default:
				rep.Gates.Blocking = append(rep.Gates.Blocking, gate)
			}
		}
	}
	for i, c := range st.Checks {
		sev := v1alpha1.SeverityBlocking
		if i < len(r.Spec.Plan.Checks) && r.Spec.Plan.Checks[i].Severity != "" {
			sev = r.Spec.Plan.Checks[i].Severity
		}
		gate := Gate{Stage: BeforeAnyChange, Name: c.Name, Severity: sev, Result: result(c.Phase),
			Timing: timing(c.StartedAt, c.FinishedAt), Message: c.Message}
		switch sev {
		case v1alpha1.SeverityWarning:
			rep.Gates.Warning = append(rep.Gates.Warning, gate)
			if gate.Result == Failed {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("before any change: warning check %s did not pass: %s", c.Name, c.Message))
			}
		case v1alpha1.SeverityInfo:
			rep.Gates.Info = append(rep.Gates.Info, gate)
		default:
			rep.Gates.Blocking = append(rep.Gates.Blocking, gate)
		}
	}
	warned := len(rep.Warnings)
	rep.Warnings = append(rep.Warnings, notes(r)...)
	rep.Rollback = rollback(r)
	rep.Summary = summary(r, rep.Rollback)
	rep.Next = next(r, warned)
	return rep
}

func stage(r *v1alpha1.UpgradeRun, ss v1alpha1.StageStatus) Stage {
	out := Stage{Name: ss.Name, Phase: ss.Phase, Attempts: ss.Attempts, Timing: timing(ss.StartedAt, ss.FinishedAt), Message: ss.Message, Steps: []Step{}}
	if b := ss.Backup; b != nil {
		out.Backup = &Backup{Objects: b.Objects, Absent: b.Absent, HelmReleases: len(b.HelmReleases)}
	}
	for _, s := range ss.Steps {
		out.Steps = append(out.Steps, Step{Name: s.Name, Phase: s.Phase, Attempts: s.Attempts,
			Timing: timing(s.StartedAt, s.FinishedAt), Message: s.Message, ApprovedBy: approvedBy(r, s.Name)})
	}
	return out
}

// severity is the plan's for the stage's gate j: blocking unless set
// (and for a record whose plan does not line up with its status).
func severity(r *v1alpha1.UpgradeRun, stage, j int) v1alpha1.Severity {
	if stage < len(r.Spec.Plan.Stages) && j < len(r.Spec.Plan.Stages[stage].Gates) {
		if s := r.Spec.Plan.Stages[stage].Gates[j].Severity; s != "" {
			return s
		}
	}
	return v1alpha1.SeverityBlocking
}

func result(p v1alpha1.Phase) GateResult {
	switch p {
	case v1alpha1.PhaseSucceeded:
		return Passed
	case v1alpha1.PhaseFailed, v1alpha1.PhaseWarned:
		return Failed
	case v1alpha1.PhaseRunning:
		return Checking
	}
	return NotChecked
}

// notes are the warnings besides the warning gates: what was retried and
// what a rollback left as it found it.
func notes(r *v1alpha1.UpgradeRun) []string {
	var out []string
	if r.Status.Attempt > 1 {
		out = append(out, fmt.Sprintf("this is attempt %d: the earlier attempts failed and were rolled back", r.Status.Attempt))
	}
	for _, ss := range r.Status.Stages {
		for _, s := range ss.Steps {
			if s.Attempts > 1 {
				out = append(out, fmt.Sprintf("stage %s: step %s ran %d times (retried or resumed)", ss.Name, s.Name, s.Attempts))
			}
		}
		if rb := ss.Rollback; rb != nil {
			for _, k := range rb.Kept {
				out = append(out, fmt.Sprintf("stage %s: the rollback kept %s, which the stage created (deleting a CRD deletes its data)", ss.Name, k))
			}
			for _, n := range rb.NotCompared {
				out = append(out, fmt.Sprintf("stage %s: not compared after the restore: %s", ss.Name, n))
			}
		}
	}
	return out
}

// rollback is what undoing the run did; nil when nothing was undone nor
// asked to be.
func rollback(r *v1alpha1.UpgradeRun) *Rollback {
	st := r.Status
	out := &Rollback{Reason: st.Failure}
	for i := len(st.Stages) - 1; i >= 0; i-- {
		ss := st.Stages[i]
		switch ss.Phase {
		case v1alpha1.PhaseRolledBack, v1alpha1.PhaseRollbackErr, v1alpha1.PhaseRollingBack, v1alpha1.PhaseSkipped:
		default:
			if b := ss.Backup; b != nil && b.Objects+b.Absent > 0 {
				out.Pending = append(out.Pending, ss.Name)
			}
			continue
		}
		rb := RolledBack{Stage: ss.Name, Phase: ss.Phase, Verified: ss.Phase == v1alpha1.PhaseRolledBack, Message: ss.Message}
		if ss.Rollback != nil {
			rb.Restored, rb.Deleted = ss.Rollback.Restored, ss.Rollback.Deleted
			rb.Kept, rb.Differences, rb.NotCompared = ss.Rollback.Kept, ss.Rollback.Differences, ss.Rollback.NotCompared
		}
		out.Stages = append(out.Stages, rb)
	}
	switch st.Phase {
	case v1alpha1.RunRolledBack:
		out.Done, out.Verified = true, true
	case v1alpha1.RunRollbackFailed:
		out.Done = true
	case v1alpha1.RunRollingBack:
	default:
		if len(out.Stages) == 0 && !st.RollbackRequested {
			return nil
		}
	}
	if out.Verified {
		out.Pending = nil // stages that needed no undoing
	}
	return out
}

// summary says in a sentence where the run stands.
func summary(r *v1alpha1.UpgradeRun, rb *Rollback) string {
	switch r.Status.Phase {
	case v1alpha1.RunSucceeded:
		return fmt.Sprintf("reached version %s", r.Spec.Plan.Version)
	case v1alpha1.RunRolledBack:
		for _, s := range rb.Stages {
			if s.Phase == v1alpha1.PhaseRolledBack {
				return "rolled back, restore verified"
			}
		}
		return "rolled back; nothing needed undoing"
	case v1alpha1.RunFailed:
		return "failed and was not rolled back: an operator must act"
	case v1alpha1.RunRollbackFailed:
		return "failed, and its rollback failed: an operator must act"
	case v1alpha1.RunRollingBack:
		return "rolling back"
	case v1alpha1.RunAborted:
		return "aborted; backups kept, a rollback is still possible"
	case v1alpha1.RunPending:
		return "not started"
	}
	if s := waitingApproval(r); s != "" {
		return fmt.Sprintf("waiting for approval of step %s", s)
	}
	return "in progress"
}

// timing of a record's start and end; the duration only once both are
// known, to the millisecond.
func timing(start, end *metav1.MicroTime) Timing {
	var t Timing
	if start != nil {
		s := start.UTC()
		t.Started = &s
	}
	if end != nil {
		e := end.UTC()
		t.Finished = &e
	}
	if start != nil && end != nil {
		t.Duration = &metav1.Duration{Duration: end.Sub(start.Time).Round(time.Millisecond)}
	}
	return t
}
