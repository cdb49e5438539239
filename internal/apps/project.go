package apps

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// project sets the kstatus conditions from the rest of the status: Ready
// always, Reconciling, Stalled and Paused only while True. A condition
// whose status does not change keeps its lastTransitionTime.
func project(st *v1alpha1.AppRolloutStatus, app *v1alpha1.AppRollout, now metav1.Time) {
	set := func(typ string, present bool, status metav1.ConditionStatus, reason string) {
		if !present {
			meta.RemoveStatusCondition(&st.Conditions, typ)
			return
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: st.Message,
			ObservedGeneration: app.Generation, LastTransitionTime: now,
		})
	}
	ready := st.Phase == v1alpha1.AppHealthy && st.CurrentVersion == app.Spec.Version
	readyStatus := metav1.ConditionFalse
	if ready {
		readyStatus = metav1.ConditionTrue
	}
	set(v1alpha1.ConditionReady, true, readyStatus, reasonOf(st))
	rollbackDone := st.Rollback != nil && st.Rollback.Done
	reconciling := moving(st.Phase) && !ready || st.Phase == v1alpha1.AppFailed && !rollbackDone ||
		st.Phase == v1alpha1.AppHealthy && !ready
	held := heldByAnalysis(st)
	set(v1alpha1.ConditionReconciling, reconciling && !app.Spec.Paused && !held, metav1.ConditionTrue, reasonOf(st))
	stalled := st.Phase == v1alpha1.AppRolledBack && st.TargetVersion == app.Spec.Version || st.Phase == v1alpha1.AppFailed && rollbackDone
	set(v1alpha1.ConditionStalled, stalled, metav1.ConditionTrue, reasonOf(st))
	switch {
	case app.Spec.Paused && moving(st.Phase):
		set(v1alpha1.ConditionPaused, true, metav1.ConditionTrue, "Paused")
	case held:
		set(v1alpha1.ConditionPaused, true, metav1.ConditionTrue, ReasonInconclusiveAnalysis)
	default:
		set(v1alpha1.ConditionPaused, false, "", "")
	}
}

// ReasonInconclusiveAnalysis: the canary holds on an inconclusive
// metric, for a person to promote or abort (Argo Rollouts' pause reason).
const ReasonInconclusiveAnalysis = "InconclusiveAnalysis"

// heldByAnalysis tells whether an inconclusive analysis holds the canary.
func heldByAnalysis(st *v1alpha1.AppRolloutStatus) bool {
	return st.Phase == v1alpha1.AppDeploying && st.Analysis != nil && st.Analysis.Phase == v1alpha1.AnalysisInconclusive
}

// reasonOf is the conditions' reason: the phase, told apart where the
// phase alone does not say (a rollback under way, or failed).
func reasonOf(st *v1alpha1.AppRolloutStatus) string {
	switch {
	case st.NextWindow != nil && moving(st.Phase):
		return v1alpha1.ReasonWaitingForWindow
	case st.Phase == "":
		return string(v1alpha1.AppPending)
	case st.Phase == v1alpha1.AppFailed && st.Rollback != nil && st.Rollback.Done:
		return v1alpha1.ReasonRollbackFailed
	case st.Phase == v1alpha1.AppFailed:
		return v1alpha1.ReasonRollingBack
	}
	return string(st.Phase)
}

// refusedConditions are those of a rollout that may not act: Stalled,
// reason Refused, and not Reconciling.
func refusedConditions(st *v1alpha1.AppRolloutStatus, app *v1alpha1.AppRollout, now metav1.Time) {
	project(st, app, now)
	meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionReconciling)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRefused,
		Message: st.Message, ObservedGeneration: app.Generation, LastTransitionTime: now,
	})
}
