package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clip"
)

// A step whose operations could take the status past what the object has
// left starts none (a save that failed after the plugin call would lose
// the operation it started): the status says why, Stalled, and the event
// comes once. With room, the same step starts them.
func TestStepStartsNothingTheStatusCouldNotRecord(t *testing.T) {
	ctx := context.Background()
	sp, err := Compile(v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1, Clusters: []v1alpha1.FleetCluster{
		{ID: "a", Version: "1.31"}, {ID: "b", Version: "1.31"}}})
	if err != nil {
		t.Fatal(err)
	}
	step := func(w *world, st v1alpha1.ClusterVersionStatus, budget int) Result {
		t.Helper()
		res, err := Step(ctx, w, sp, st, Inputs{Generation: 1, Now: time.Now, StatusBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Until a step has a call to make, with room for it.
	roomy := newWorld([]string{"a", "b"}, "1.30")
	var st v1alpha1.ClusterVersionStatus
	for i := 0; i < 4 && roomy.seq == 0; i++ {
		st = step(roomy, st, MaxObjectBytes).Status
	}
	if roomy.seq == 0 {
		t.Fatal("no operation started with room for it")
	}

	tight := newWorld([]string{"a", "b"}, "1.30")
	var events []Event
	st = v1alpha1.ClusterVersionStatus{}
	for i := 0; i < 4; i++ {
		res := step(tight, st, 600)
		st, events = res.Status, append(events, res.Events...)
	}
	if tight.seq != 0 {
		t.Fatalf("%d operations started with no room to record them", tight.seq)
	}
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStalled)
	if c == nil || c.Reason != ReasonStatusTooLarge || !strings.Contains(st.Message, "nothing starts; split the fleet") {
		t.Errorf("message %q, Stalled %+v; want why nothing starts", st.Message, c)
	}
	n := 0
	for _, e := range events {
		if e.Reason == ReasonStatusTooLarge {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d StatusTooLarge events over 4 steps; want 1", n)
	}
}

// Free text is cut to what the size arithmetic counts, on a rune
// boundary.
func TestFitCutsFreeText(t *testing.T) {
	long := strings.Repeat("é", 1000)
	st := v1alpha1.ClusterVersionStatus{Message: long, Cause: long, Clusters: []v1alpha1.FleetClusterStatus{
		{ID: "a", Message: long, Operation: &v1alpha1.PluginOperation{Progress: long}}}}
	fit(&st)
	for name, got := range map[string]struct {
		s string
		n int
	}{"message": {st.Message, MaxFleetMessage}, "cause": {st.Cause, MaxFleetMessage},
		"cluster message": {st.Clusters[0].Message, MaxClusterMessage}, "progress": {st.Clusters[0].Operation.Progress, MaxProgress}} {
		if len(got.s) > got.n || !strings.HasSuffix(got.s, "é…") {
			t.Errorf("%s: %d bytes (%q…); want at most %d, cut between runes", name, len(got.s), got.s[:8], got.n)
		}
	}
	if s := clip.Bytes("short", 10); s != "short" {
		t.Errorf("clip of a short string: %q", s)
	}
}
