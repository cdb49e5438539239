package fleet

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// A plugin whose report's text changes at every poll ("12s left", "11s
// left") does not make every step save the status; a move of its counts
// does.
func TestProgressSavedWhenItsCountsMove(t *testing.T) {
	sp, err := Compile(v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1, Clusters: []v1alpha1.FleetCluster{{ID: "a", Version: "1.31"}, {ID: "b", Version: "1.31"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := v1alpha1.ClusterVersionStatus{ObservedGeneration: 1, Phase: v1alpha1.FleetProgressing, Wave: DefaultWave, Clusters: []v1alpha1.FleetClusterStatus{
		{ID: "a", Phase: v1alpha1.ClusterUpgrading, Master: "1.31", Previous: &v1alpha1.RecordedVersions{Master: "1.30"},
			Operation: &v1alpha1.PluginOperation{ID: "op-1", Type: "UpgradeNodePool", Action: v1alpha1.ActionUpgradeNodePool}},
		{ID: "b", Phase: v1alpha1.ClusterPending, InService: true, Available: true},
	}}
	report := func(done int32, text string) Observed {
		return Observed{Now: time.Now(), Generation: 1, Ops: map[string]pluginsdk.OperationReport{
			"a": {Status: pluginsdk.OperationRunning, Done: done, Total: 3, Message: text}}}
	}
	first := Decide(sp, st, report(1, "12s left")).Status
	if got := first.Clusters[0].Operation.Progress; got != "1/3: 12s left" {
		t.Fatalf("progress %q, want the first report's", got)
	}
	same := Decide(sp, first, report(1, "11s left")).Status
	if p, _ := StatusPatch(first, same); p != nil {
		t.Errorf("only the text moved, yet the status changed: %s", p)
	}
	moved := Decide(sp, first, report(2, "6s left")).Status
	if got := moved.Clusters[0].Operation.Progress; got != "2/3: 6s left" {
		t.Errorf("progress %q after a node more, want 2/3", got)
	}
}
