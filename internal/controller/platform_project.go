package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// PlatformProgress is what a drive knows of an upgrade: where it started,
// the path, the hops and how it ended.
type PlatformProgress struct {
	Generation int64
	Previous   string
	Current    string
	// SolvedFrom is where Path starts: the version the last solve found.
	SolvedFrom string
	Path       []string
	Hops       []v1alpha1.HopStatus
	// Phase is Running until the drive ends.
	Phase   v1alpha1.PlatformPhase
	Message string
}

// ProjectPlatform writes a PlatformUpgrade's status from its drive's
// progress (nil when no drive of this process has moved it) and what
// keeps it from moving. It is pure.
func ProjectPlatform(st *v1alpha1.PlatformUpgradeStatus, generation int64, p *PlatformProgress, suspend bool, blocked *Blocked, now metav1.Time) {
	if p != nil {
		if st.ObservedGeneration != p.Generation {
			// Another target: its own start, path and hops.
			st.PreviousVersion, st.Path, st.Hops = "", nil, nil
		}
		st.ObservedGeneration = p.Generation
		if st.PreviousVersion == "" {
			st.PreviousVersion = p.Previous
		}
		if p.Current != "" {
			st.CurrentVersion = p.Current
		}
		if p.Path != nil {
			st.Path = joinPath(st.Path, p.SolvedFrom, p.Path)
		}
		st.Hops = mergeHops(st.Hops, p.Hops)
		st.Phase, st.Message = p.Phase, p.Message
		st.Hop = hopOf(st.Path, st.Hops)
	}
	if st.Phase == "" {
		st.Phase = v1alpha1.PlatformPending
	}
	gen := st.ObservedGeneration
	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: now})
	}
	remove := func(t string) { meta.RemoveStatusCondition(&st.Conditions, t) }
	switch st.Phase {
	case v1alpha1.PlatformSucceeded:
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, st.Message)
		remove(v1alpha1.ConditionReconciling)
		remove(v1alpha1.ConditionStalled)
	case v1alpha1.PlatformRolledBack, v1alpha1.PlatformFailed:
		reason := v1alpha1.ReasonFailed
		if st.Phase == v1alpha1.PlatformRolledBack {
			reason = v1alpha1.ReasonRolledBack
		}
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, st.Message)
		set(v1alpha1.ConditionStalled, metav1.ConditionTrue, reason, st.Message)
		remove(v1alpha1.ConditionReconciling)
	default:
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonRunning, st.Message)
		set(v1alpha1.ConditionReconciling, metav1.ConditionTrue, v1alpha1.ReasonRunning, st.Message)
		remove(v1alpha1.ConditionStalled)
	}
	if b := blocked; b != nil && b.Generation == generation && (p == nil || p.Phase == v1alpha1.PlatformBlocked) {
		st.Phase, st.Message, st.ObservedGeneration, gen = v1alpha1.PlatformBlocked, b.Message, generation, generation
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, b.Reason, b.Message)
		if b.Reason == v1alpha1.ReasonQueued || b.Reason == v1alpha1.ReasonUnavailable || b.Reason == v1alpha1.ReasonWaitingForWindow {
			set(v1alpha1.ConditionReconciling, metav1.ConditionTrue, b.Reason, b.Message)
			remove(v1alpha1.ConditionStalled)
		} else {
			set(v1alpha1.ConditionStalled, metav1.ConditionTrue, b.Reason, b.Message)
			remove(v1alpha1.ConditionReconciling)
		}
	}
	if suspend && st.Phase != v1alpha1.PlatformSucceeded {
		st.Phase = v1alpha1.PlatformSuspended
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSuspended, "spec.suspend is true: the upgrade stays where it is")
		remove(v1alpha1.ConditionReconciling)
	}
}

// mergeHops adds the drive's hops to those the status lists (from before
// a restart), one entry per run, in order.
func mergeHops(have, add []v1alpha1.HopStatus) []v1alpha1.HopStatus {
	out := append([]v1alpha1.HopStatus(nil), have...)
	for _, h := range add {
		replaced := false
		for i := range out {
			if out[i].Run == h.Run {
				if h.From == "" {
					h.From = out[i].From // a resumed hop keeps where it started
				}
				out[i], replaced = h, true
				break
			}
		}
		if !replaced {
			out = append(out, h)
		}
	}
	return out
}

// joinPath keeps the stops a path solved before a restart had passed
// (up to from, where the new solve starts) in front of the new path, so
// the status shows the whole way.
func joinPath(old []string, from string, path []string) []string {
	for k, v := range old {
		if v == from {
			return append(append([]string(nil), old[:k+1]...), path...)
		}
	}
	return path
}

// hopOf is "i/n": the last hop run among the path's stops.
func hopOf(path []string, hops []v1alpha1.HopStatus) string {
	if len(hops) == 0 || len(path) == 0 {
		return ""
	}
	last := hops[len(hops)-1].To
	for i, v := range path {
		if v == last {
			return fmt.Sprintf("%d/%d", i+1, len(path))
		}
	}
	return ""
}

// PlatformBlockedFromStatus recovers a blocked start from the conditions,
// so a restarted controller keeps backing off.
func PlatformBlockedFromStatus(st *v1alpha1.PlatformUpgradeStatus) *Blocked {
	if st.Phase != v1alpha1.PlatformBlocked {
		return nil
	}
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse {
		return nil
	}
	return &Blocked{Generation: c.ObservedGeneration, At: c.LastTransitionTime.Time, Attempts: 1, Reason: c.Reason, Message: c.Message}
}
