package apps

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// take tells whether the action annotation has a value not yet acted on,
// and marks it handled.
func (x *decider) take(key string) bool {
	v, ok := x.app.Annotations[key]
	if !ok || v == x.st.HandledActions[key] {
		return false
	}
	x.st.HandledActions[key] = v
	return true
}

// actions answers abort and retry; promote is answered where a canary
// holds its pause. An action that does not apply where the rollout
// stands is marked handled and does nothing (a later value asks again).
func (x *decider) actions() (Decision, bool) {
	if x.take(v1alpha1.AnnotationAbort) && Abortable(x.st.Phase) && x.st.Attempt > 0 {
		return x.fail("aborted (annotation " + v1alpha1.AnnotationAbort + ")"), true
	}
	if x.st.Phase != v1alpha1.AppDeploying && !inconclusive(x.st) {
		// No canary step, preview or inconclusive analysis holds:
		// nothing to promote.
		x.take(v1alpha1.AnnotationPromote)
	}
	asked := x.st.HandledActions[v1alpha1.AnnotationRetry]
	if !x.take(v1alpha1.AnnotationRetry) {
		return Decision{}, false
	}
	switch {
	case x.st.Phase == v1alpha1.AppRolledBack:
		d := x.start()
		if d.Action != Capture {
			// It waits (a window, the group, a Service): the retry stays
			// asked, so the rollout is looked at again until it starts.
			x.st.HandledActions[v1alpha1.AnnotationRetry] = asked
		}
		return d, true
	case x.st.Phase == v1alpha1.AppFailed && x.st.Rollback != nil && x.st.Rollback.Done:
		x.st.Rollback = &v1alpha1.AppRollback{Reason: x.st.Rollback.Reason, Group: x.st.Rollback.Group}
		x.st.PhaseStartedAt = &x.now
		x.event(false, "RollbackRetried", "rolling back again")
		return x.rollingBack(), true
	}
	return Decision{}, false
}

// Abortable tells a phase in which an attempt changes the Deployment: an
// abort rolls it back. Pending waits before an attempt begins (its group,
// a Service, a window) and its status still holds the last attempt's
// backup: aborting there would undo a rollout that succeeded.
func Abortable(p v1alpha1.AppPhase) bool {
	switch p {
	case v1alpha1.AppMigrating, v1alpha1.AppDeploying, v1alpha1.AppHealthChecking:
		return true
	}
	return false
}

// inconclusive: an analysis holds the rollout for a person (a promote
// measures it anew), in whatever phase it runs (a blue-green
// post-promotion analysis runs in HealthChecking).
func inconclusive(st *v1alpha1.AppRolloutStatus) bool {
	return st.Analysis != nil && st.Analysis.Phase == v1alpha1.AnalysisInconclusive
}

// paused holds a moving rollout where it is.
func (x *decider) paused() Decision {
	if x.st.PausedAt == nil {
		x.st.PausedAt = &x.now
		x.event(false, "Paused", "paused by spec.paused")
	}
	x.st.Message = fmt.Sprintf("paused (spec.paused) in phase %s: set spec.paused to false to go on from here", x.st.Phase)
	return Decision{}
}

// resumed moves every time the rollout counts from by the time it was
// paused, so a deadline or a canary's pause goes on with what it had
// left.
func (x *decider) resumed() {
	if x.st.PausedAt == nil {
		return
	}
	held := x.o.Now.Sub(x.st.PausedAt.Time)
	times := []**metav1.Time{&x.st.PhaseStartedAt, &x.st.CanaryStepStartedAt, &x.st.PauseStartedAt}
	if bg := x.st.BlueGreen; bg != nil {
		times = append(times, &bg.PreviewReadyAt, &bg.SwitchedAt)
	}
	for _, t := range times {
		if *t != nil {
			moved := metav1.NewTime((*t).Add(held))
			*t = &moved
		}
	}
	if an := x.st.Analysis; an != nil {
		an.StartedAt = metav1.NewTime(an.StartedAt.Add(held))
	}
	x.st.PausedAt = nil
	x.event(false, "Resumed", fmt.Sprintf("resumed after %s paused", held.Round(time.Second)))
}
