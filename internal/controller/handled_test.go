package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// A request answered and saved is not pending again while the cache still
// shows the status from before the save; a later value of the annotation
// is, and another object's requests are not affected.
func TestAnsweredRequestsAreNotAnsweredAgainFromAStaleCache(t *testing.T) {
	var a answered
	plan, other := types.UID("plan-1"), types.UID("plan-2")
	annotations := map[string]string{"upshift.dev/approve": "approve"}
	stale := map[string]string{}
	if got := PendingRequests(annotations, a.with(plan, stale)); len(got) != 1 {
		t.Fatalf("before any answer: %v pending, want the approval", got)
	}
	a.saved(plan, map[string]string{"upshift.dev/approve": "approve"})
	if got := PendingRequests(annotations, a.with(plan, stale)); len(got) != 0 {
		t.Errorf("answered and saved, read from a stale cache: %v pending, want none", got)
	}
	if got := PendingRequests(annotations, a.with(other, stale)); len(got) != 1 {
		t.Errorf("another plan's approval: %v pending, want it", got)
	}
	annotations["upshift.dev/approve"] = "approve@2"
	if got := PendingRequests(annotations, a.with(plan, stale)); len(got) != 1 {
		t.Errorf("a new value of the annotation: %v pending, want it", got)
	}
	if stale["upshift.dev/approve"] != "" {
		t.Error("with changed the status's map")
	}
}
