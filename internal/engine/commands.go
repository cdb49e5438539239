package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// ErrNotAllowed: the command does not apply to the run in its phase.
var ErrNotAllowed = errors.New("not allowed in this phase")

// NewRun builds the record of a new run of the plan, all stages Pending.
func NewRun(p *v1alpha1.UpgradePlan, digest string, sources map[string]string, now time.Time) *v1alpha1.UpgradeRun {
	r := &v1alpha1.UpgradeRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.RunKind},
		ObjectMeta: metav1.ObjectMeta{Name: RunOf(p)},
		Spec:       v1alpha1.UpgradeRunSpec{Plan: p.Spec, PlanNamespace: p.Namespace, PlanDigest: digest, SourceDigests: sources},
	}
	startAttempt(r, now)
	return r
}

// FirstAttempt gives a run created and stopped before its status was
// first saved (status.attempt 0) the status of its first attempt, as
// NewRun made it, and tells whether it did. Such a run's first stage may
// have been backed up and its steps started meanwhile: with the status,
// a resume looks for that backup (Sought) and drives it as any other.
func FirstAttempt(r *v1alpha1.UpgradeRun, now time.Time) bool {
	if r.Status.Attempt != 0 {
		return false
	}
	r.Status = v1alpha1.RunStatus{}
	startAttempt(r, now)
	return true
}

// startAttempt resets every stage to Pending and starts from the first.
func startAttempt(r *v1alpha1.UpgradeRun, now time.Time) {
	t := metav1.NewMicroTime(now)
	st := &r.Status
	st.Attempt++
	st.Transitions++
	st.Phase = v1alpha1.RunRunning
	st.Message = ""
	st.Failure = ""
	st.StartedAt = &t
	st.FinishedAt = nil
	st.RollbackRequested = false
	st.AbortRequested = false
	st.Approvals = nil // a new attempt is approved anew
	st.Stages = make([]v1alpha1.StageStatus, len(r.Spec.Plan.Stages))
	for i, s := range r.Spec.Plan.Stages {
		ss := v1alpha1.StageStatus{Name: s.Name, Phase: v1alpha1.PhasePending}
		for _, step := range s.Steps {
			ss.Steps = append(ss.Steps, v1alpha1.StepStatus{Name: step.Name, Phase: v1alpha1.PhasePending})
		}
		for j, g := range s.Gates {
			ss.Gates = append(ss.Gates, v1alpha1.StepStatus{Name: GateName(g, j), Phase: v1alpha1.PhasePending})
		}
		st.Stages[i] = ss
	}
	locate(r)
}

// GateName is how a gate is shown: its kind and target.
func GateName(g v1alpha1.Gate, i int) string {
	switch {
	case g.Ready != nil:
		if g.Ready.Name != "" {
			return fmt.Sprintf("ready %s %s", lower(g.Ready.Kind), join(g.Ready.Namespace, g.Ready.Name))
		}
		return fmt.Sprintf("ready %ss %q", lower(g.Ready.Kind), g.Ready.Selector)
	case g.HTTP != nil:
		return "http " + redact.URL(g.HTTP.URL)
	case g.PodsRunning != nil:
		return fmt.Sprintf("podsRunning %q in %s", g.PodsRunning.Selector, g.PodsRunning.Namespace)
	case g.PVCsBound != nil:
		if g.PVCsBound.Selector == "" {
			return "pvcsBound in " + g.PVCsBound.Namespace
		}
		return fmt.Sprintf("pvcsBound %q in %s", g.PVCsBound.Selector, g.PVCsBound.Namespace)
	case g.EnvKept != nil:
		return envKeptName(g.EnvKept)
	case g.Soak != nil:
		return "soak " + g.Soak.Duration.Duration.String()
	case g.Metric != nil:
		return "metric " + g.Metric.Name
	case g.HelmReleases != nil:
		what := "helmReleases"
		if len(g.HelmReleases.Names) > 0 {
			what += " " + strings.Join(g.HelmReleases.Names, ",")
		}
		if g.HelmReleases.Namespace == "" {
			return what + " in every namespace"
		}
		return what + " in " + g.HelmReleases.Namespace
	case g.NodesReady != nil:
		if g.NodesReady.Selector == "" {
			return "nodesReady"
		}
		return fmt.Sprintf("nodesReady %q", g.NodesReady.Selector)
	}
	return fmt.Sprintf("gate %d", i)
}

// NewAttempt starts a rolled-back run again from its first stage, with
// fresh backups (apply --retry).
func NewAttempt(r *v1alpha1.UpgradeRun, now time.Time) error {
	if r.Status.Phase != v1alpha1.RunRolledBack {
		return fmt.Errorf("a new attempt starts only after a rollback; run %s is %s: %w", r.Name, r.Status.Phase, ErrNotAllowed)
	}
	startAttempt(r, now)
	return nil
}

// Resume lets an interrupted or aborted run go on where it stopped.
func Resume(r *v1alpha1.UpgradeRun) {
	st := &r.Status
	st.AbortRequested = false
	if st.Phase != v1alpha1.RunAborted {
		return
	}
	// Not a transition of its own: the next Begin saves it.
	st.FinishedAt = nil
	if st.RollbackRequested {
		st.Phase = v1alpha1.RunRollingBack
	} else {
		st.Phase = v1alpha1.RunRunning
	}
	st.Message = "resumed"
}

// RequestRollback asks for every changed stage to be undone, last first.
func RequestRollback(r *v1alpha1.UpgradeRun, reason string, now time.Time) error {
	st := &r.Status
	switch st.Phase {
	case v1alpha1.RunRolledBack:
		return fmt.Errorf("run %s is already rolled back: %w", r.Name, ErrNotAllowed)
	case v1alpha1.RunRollingBack:
		return nil // already on its way; the caller drives it on
	}
	st.Transitions++
	if st.Failure == "" {
		st.Failure = reason
	}
	st.RollbackRequested = true
	st.AbortRequested = false
	st.Phase = v1alpha1.RunRollingBack
	st.FinishedAt = nil
	st.Message = reason
	// A stage whose restore failed gets another try.
	for i := range st.Stages {
		if st.Stages[i].Phase == v1alpha1.PhaseRollbackErr {
			st.Stages[i].Phase = v1alpha1.PhaseFailed
		}
	}
	settle(r, ptrTime(now))
	return nil
}

// Retry makes a run that failed without rollback go on from its failed
// step (or gate); succeeded steps are not run again.
func Retry(r *v1alpha1.UpgradeRun) error {
	st := &r.Status
	if st.Phase != v1alpha1.RunFailed {
		return fmt.Errorf("retry applies to a run that failed and was not rolled back; run %s is %s: %w", r.Name, st.Phase, ErrNotAllowed)
	}
	st.Transitions++
	for i := range st.Stages {
		ss := &st.Stages[i]
		if ss.Phase != v1alpha1.PhaseFailed {
			continue
		}
		ss.Phase = v1alpha1.PhaseRunning
		ss.FinishedAt = nil
		ss.Message = "retrying"
		for j := range ss.Steps {
			if ss.Steps[j].Phase == v1alpha1.PhaseFailed {
				ss.Steps[j].Phase = v1alpha1.PhasePending
			}
		}
		for j := range ss.Gates {
			if ss.Gates[j].Phase == v1alpha1.PhaseFailed {
				ss.Gates[j].Phase = v1alpha1.PhasePending
			}
		}
	}
	st.Phase = v1alpha1.RunRunning
	st.FinishedAt = nil
	st.Failure = ""
	st.Message = "retrying"
	locate(r)
	return nil
}

// Abort stops a running or waiting run where it is. Backups stay, and a
// rollback is still possible.
func Abort(r *v1alpha1.UpgradeRun, who string, now time.Time) error {
	st := &r.Status
	switch st.Phase {
	case v1alpha1.RunRunning, v1alpha1.RunRollingBack, v1alpha1.RunPending:
	default:
		return fmt.Errorf("run %s is %s, not running: %w", r.Name, st.Phase, ErrNotAllowed)
	}
	st.Transitions++
	st.Phase = v1alpha1.RunAborted
	st.AbortRequested = false
	st.FinishedAt = ptrTime(now)
	st.Message = "aborted by " + who
	return nil
}

func ptrTime(t time.Time) *metav1.MicroTime { m := metav1.NewMicroTime(t); return &m }
