package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/conditions"
)

// Project writes the plan's status from its run and from what keeps the
// run from moving (a suspend, a blocked start). It is pure, like
// conditions.SetPlanStatus, which it builds on: the run's own state first,
// then what the controller knows on top.
func Project(st *v1alpha1.UpgradePlanStatus, generation int64, run *v1alpha1.UpgradeRun, suspend bool, blocked *Blocked, now metav1.Time) {
	conditions.SetPlanStatus(st, generation, run, now)
	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: generation, LastTransitionTime: now})
	}
	if b := blocked; b != nil && b.Generation == generation {
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, b.Reason, b.Message)
		if b.Reason == v1alpha1.ReasonQueued || b.Reason == v1alpha1.ReasonUnavailable || b.Reason == v1alpha1.ReasonWaitingForWindow {
			// It starts by itself once the cluster is free or reachable:
			// progressing, not stuck.
			set(v1alpha1.ConditionReconciling, metav1.ConditionTrue, b.Reason, b.Message)
			meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionStalled)
		} else {
			set(v1alpha1.ConditionStalled, metav1.ConditionTrue, b.Reason, b.Message)
			meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionReconciling)
		}
	}
	if suspend && !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady) {
		// Suspended is neither progressing nor stuck: a person chose it.
		msg := "spec.suspend is true: the run stays where it is"
		if run != nil && moving(run) {
			msg += " (" + string(phaseOf(run)) + " at " + where(run) + ")"
		}
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSuspended, msg)
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionReconciling)
	}
}

// BlockedFromStatus recovers a blocked start from the plan's conditions,
// so a restarted controller keeps backing off (and keeps saying why)
// instead of trying again at once.
func BlockedFromStatus(st *v1alpha1.UpgradePlanStatus) *Blocked {
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse {
		return nil
	}
	switch c.Reason {
	case v1alpha1.ReasonInvalid, v1alpha1.ReasonPreflightFailed, v1alpha1.ReasonRefused, v1alpha1.ReasonQueued, v1alpha1.ReasonUnavailable:
		return &Blocked{Generation: c.ObservedGeneration, At: c.LastTransitionTime.Time, Attempts: 1, Reason: c.Reason, Message: c.Message}
	}
	return nil
}

func where(run *v1alpha1.UpgradeRun) string {
	switch {
	case run.Status.Stage == "":
		return "its start"
	case run.Status.Step == "":
		return "stage " + run.Status.Stage
	}
	return "stage " + run.Status.Stage + ", step " + run.Status.Step
}
