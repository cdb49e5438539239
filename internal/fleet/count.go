package fleet

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Condition types of a ClusterVersion, beyond Ready, Reconciling, Stalled
// and WaitingForApproval.
const ConditionPluginReachable = "PluginReachable"

// count fills the printer columns' counts.
func (x *decider) count() {
	x.st.Done, x.st.Available = 0, 0
	for i := range x.st.Clusters {
		e := x.entry(i)
		if e.Phase == v1alpha1.ClusterDone {
			x.st.Done++
		}
		if e.InService && e.Available {
			x.st.Available++
		}
	}
}

// setConditions derives the kstatus conditions from the phase.
func setConditions(st *v1alpha1.ClusterVersionStatus, now time.Time) {
	set := func(typ string, status metav1.ConditionStatus, reason string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: st.Message,
			ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)})
	}
	reason := string(st.Phase)
	switch st.Phase {
	case v1alpha1.FleetSucceeded:
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, reason)
		set(v1alpha1.ConditionReconciling, metav1.ConditionFalse, reason)
	case v1alpha1.FleetHalted, v1alpha1.FleetRevertFailed, v1alpha1.FleetReverted:
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason)
		set(v1alpha1.ConditionReconciling, metav1.ConditionFalse, reason)
	case v1alpha1.FleetSuspended:
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason)
		set(v1alpha1.ConditionReconciling, metav1.ConditionFalse, reason)
	default:
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason)
		set(v1alpha1.ConditionReconciling, metav1.ConditionTrue, reason)
	}
	switch st.Phase {
	case v1alpha1.FleetHalted, v1alpha1.FleetRevertFailed, v1alpha1.FleetReverted:
		set(v1alpha1.ConditionStalled, metav1.ConditionTrue, reason)
	default:
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionStalled)
	}
	if st.Phase == v1alpha1.FleetWaitingForApproval {
		set(v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, reason)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionWaitingForApproval)
	}
}
