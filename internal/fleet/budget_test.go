package fleet

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// A cluster the status records as upgrading, with no operation recorded
// (between two of ours, or left so by a controller that stopped), does
// not count toward requiredAvailableCount, whatever its last status said:
// the next cluster waits rather than leave the fleet with none serving.
func TestUpgradingWithoutOperationDoesNotServe(t *testing.T) {
	two := int32(2)
	sp, err := Compile(v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1,
		Clusters: []v1alpha1.FleetCluster{{ID: "a", Version: "1.31"}, {ID: "b", Version: "1.31"}},
		Waves:    []v1alpha1.Wave{{Name: "all", Clusters: []string{"a", "b"}, MaxConcurrency: 2, MaxUnavailable: &two}}})
	if err != nil {
		t.Fatal(err)
	}
	st := v1alpha1.ClusterVersionStatus{ObservedGeneration: 1, Phase: v1alpha1.FleetProgressing, Wave: "all", Target: sp.Target(), Clusters: []v1alpha1.FleetClusterStatus{
		{ID: "a", Phase: v1alpha1.ClusterUpgrading, Master: "1.30", InService: true, Available: true, Previous: &v1alpha1.RecordedVersions{Master: "1.30"}},
		{ID: "b", Phase: v1alpha1.ClusterPending, Master: "1.30", InService: true, Available: true},
	}}
	serving := pluginsdk.ClusterStatus{Service: pluginsdk.ServiceIn, Available: true}
	// b is read; a's versions are not (its decision waits for them).
	o := Observed{Now: time.Now(), Generation: 1, AllStatuses: true,
		Versions: map[string]pluginsdk.ClusterVersion{"b": {Master: "1.30"}},
		Statuses: map[string]pluginsdk.ClusterStatus{"a": serving, "b": serving}}
	d := Decide(sp, st, o)
	for _, c := range d.Calls {
		if c.Cluster == "b" && c.Action == v1alpha1.ActionServiceOut {
			t.Fatalf("b was taken out of service while a, upgrading, was the only other cluster: %+v", d.Calls)
		}
	}
	if msg := d.Status.Clusters[1].Message; msg == "" {
		t.Errorf("b does not say why it waits")
	}
}
