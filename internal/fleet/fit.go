package fleet

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clip"
)

// What the controller writes of free text, at most, in bytes: the
// plugin's messages would otherwise grow a status without bound (the
// arithmetic beside spec.clusters' MaxItems counts these).
const (
	MaxClusterMessage = 256
	MaxProgress       = 64
	MaxFleetMessage   = 1024
)

// MaxObjectBytes is how large a ClusterVersion, spec and status, may
// grow before the controller starts no operation: a quarter MiB under
// etcd's 1.5 MiB request limit, for what an estimate misses.
const MaxObjectBytes = 5 << 18 // 1.25 MiB

// operationReserve is what recording one operation adds to a status at
// most: a PluginOperation with a 128-byte id and a 32-byte type, its
// node pool, version and progress at their largest.
const operationReserve = 512

// ReasonStatusTooLarge: the status would not fit in the object.
const ReasonStatusTooLarge = "StatusTooLarge"

// fit cuts the free text of a status to what it may hold, so its size
// stays within what the arithmetic counts.
func fit(st *v1alpha1.ClusterVersionStatus) {
	st.Message = clip.Bytes(st.Message, MaxFleetMessage)
	st.Cause = clip.Bytes(st.Cause, MaxFleetMessage)
	for i := range st.Conditions {
		st.Conditions[i].Message = clip.Bytes(st.Conditions[i].Message, MaxFleetMessage)
	}
	for i := range st.Clusters {
		e := &st.Clusters[i]
		e.Message = clip.Bytes(e.Message, MaxClusterMessage)
		if e.Operation != nil {
			e.Operation.Progress = clip.Bytes(e.Operation.Progress, MaxProgress)
		}
	}
}

// tooLarge tells whether to hold back a step's calls: the status, with
// the operations they would record, could not be saved within budget
// bytes, and a save that fails after a plugin call would lose the
// operation it started. It says so in the status (Stalled), and gives
// the event when the previous status (its message was) did not.
func tooLarge(st *v1alpha1.ClusterVersionStatus, was string, calls []Call, budget int, now metav1.Time) (bool, []Event) {
	if budget <= 0 || len(calls) == 0 {
		return false, nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return false, nil
	}
	need := len(b) + len(calls)*operationReserve
	if need <= budget {
		return false, nil
	}
	msg := clip.Bytes(fmt.Sprintf("the status would take %d bytes with the %d operations to start, over the %d this ClusterVersion has left under %d: "+
		"nothing starts; split the fleet into several ClusterVersions", need, len(calls), budget, MaxObjectBytes), MaxFleetMessage)
	st.Message = msg
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue,
		Reason: ReasonStatusTooLarge, Message: msg, ObservedGeneration: st.ObservedGeneration, LastTransitionTime: now})
	if was == msg {
		return true, nil
	}
	return true, []Event{{Warning: true, Reason: ReasonStatusTooLarge, Message: msg}}
}
