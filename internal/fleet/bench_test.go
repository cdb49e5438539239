package fleet

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// A decision over a fleet of 1,000 clusters, a hundred of them in
// flight, and the patch that saves it: the work each reconcile does
// besides the plugin's and the API server's. Compare with the JSON
// round trip of the whole status, which reading the object costs.
func BenchmarkDecide1000(b *testing.B) {
	spec := v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 900, Waves: []v1alpha1.Wave{{Name: "all", MaxConcurrency: 100}}}
	for i := range 1000 {
		spec.Waves[0].Clusters = append(spec.Waves[0].Clusters, fmt.Sprintf("c-%04d", i))
		spec.Clusters = append(spec.Clusters, v1alpha1.FleetCluster{ID: fmt.Sprintf("c-%04d", i), Version: "1.31"})
	}
	sp, err := Compile(spec)
	if err != nil {
		b.Fatal(err)
	}
	st := fleetStatus(1000)
	st.ObservedGeneration = 1
	o := Observed{Now: time.Now(), Generation: 1, Versions: map[string]pluginsdk.ClusterVersion{}, Statuses: map[string]pluginsdk.ClusterStatus{},
		Ops: map[string]pluginsdk.OperationReport{}, AllStatuses: true}
	for i := range 100 {
		e := &st.Clusters[i]
		e.Phase, e.InService = v1alpha1.ClusterUpgrading, false
		e.Operation = &v1alpha1.PluginOperation{ID: fmt.Sprintf("op-%d", i), Type: "UpgradeMaster", Action: v1alpha1.ActionUpgradeMaster}
		o.Ops[e.ID] = pluginsdk.OperationReport{Status: pluginsdk.OperationRunning}
	}
	for _, e := range st.Clusters {
		o.Statuses[e.ID] = pluginsdk.ClusterStatus{Service: map[bool]pluginsdk.ServiceState{true: pluginsdk.ServiceIn, false: pluginsdk.ServiceOut}[e.InService], Available: true}
	}
	b.Run("decide+patch", func(b *testing.B) {
		for b.Loop() {
			d := Decide(sp, st, o)
			if _, err := StatusPatch(st, d.Status); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status-json-roundtrip", func(b *testing.B) {
		for b.Loop() {
			data, _ := json.Marshal(st)
			var back v1alpha1.ClusterVersionStatus
			_ = json.Unmarshal(data, &back)
		}
	})
}
