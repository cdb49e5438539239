package fleet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func fleetStatus(n int) v1alpha1.ClusterVersionStatus {
	st := v1alpha1.ClusterVersionStatus{Phase: v1alpha1.FleetProgressing, Desired: int32(n), Wave: "all"}
	for i := range n {
		st.Clusters = append(st.Clusters, v1alpha1.FleetClusterStatus{ID: fmt.Sprintf("c-%04d", i), Phase: v1alpha1.ClusterPending,
			Master: "1.30", NodePools: []v1alpha1.NodePoolStatus{{ID: "p1", Version: "1.30"}}, InService: true, Available: true})
	}
	return st
}

// apply applies the patch to {"status": from}, as the API server does.
func apply(t *testing.T, from v1alpha1.ClusterVersionStatus, patch []byte) v1alpha1.ClusterVersionStatus {
	t.Helper()
	doc, _ := json.Marshal(map[string]any{"status": from})
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("apply %s: %v", patch, err)
	}
	var got struct{ Status v1alpha1.ClusterVersionStatus }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got.Status
}

// A step that changes two clusters of a thousand patches those two and
// the counts, not the thousand; applied, the patch gives the next status.
func TestStatusPatchCarriesOnlyWhatChanged(t *testing.T) {
	from := fleetStatus(1000)
	to := *from.DeepCopy()
	to.Clusters[3].Phase = v1alpha1.ClusterUpgrading
	to.Clusters[3].Operation = &v1alpha1.PluginOperation{ID: "op-1", Type: "ServiceOut", Action: v1alpha1.ActionServiceOut}
	to.Clusters[998].InService = false
	to.Available = 999
	to.Message = ""
	patch, err := StatusPatch(from, to)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := json.Marshal(to)
	if len(patch)*20 > len(full) {
		t.Errorf("the patch is %d bytes for a status of %d: want a small fraction", len(patch), len(full))
	}
	for _, want := range []string{`"/status/clusters/3"`, `"/status/clusters/998"`, `"/status/available"`} {
		if !strings.Contains(string(patch), want) {
			t.Errorf("the patch does not touch %s: %s", want, patch)
		}
	}
	if got := apply(t, from, patch); !reflect.DeepEqual(got, to) {
		t.Errorf("the patched status differs from the next one")
	}
	if p, _ := StatusPatch(to, to); p != nil {
		t.Errorf("no change patched %s", p)
	}
}

// Fields that go away are removed; a first status, or a new list of
// clusters, replaces the whole status.
func TestStatusPatchRemovesAndReplaces(t *testing.T) {
	from := fleetStatus(3)
	from.Message = "waiting"
	to := *from.DeepCopy()
	to.Message = ""
	patch, _ := StatusPatch(from, to)
	if got := apply(t, from, patch); got.Message != "" {
		t.Errorf("message still %q after %s", got.Message, patch)
	}
	for _, from := range []v1alpha1.ClusterVersionStatus{{}, fleetStatus(2)} {
		patch, _ := StatusPatch(from, to)
		if got := apply(t, from, patch); !reflect.DeepEqual(got, to) {
			t.Errorf("from %d clusters: %s did not give the next status", len(from.Clusters), patch)
		}
	}
}

// A list reordered since the status was read refuses the patch rather
// than writing a cluster's line over another's.
func TestStatusPatchRefusesAReorderedList(t *testing.T) {
	from := fleetStatus(3)
	to := *from.DeepCopy()
	to.Clusters[1].Phase = v1alpha1.ClusterDone
	patch, _ := StatusPatch(from, to)
	moved := *from.DeepCopy()
	moved.Clusters[1], moved.Clusters[2] = moved.Clusters[2], moved.Clusters[1]
	doc, _ := json.Marshal(map[string]any{"status": moved})
	p, _ := jsonpatch.DecodePatch(patch)
	if _, err := p.Apply(doc); err == nil {
		t.Error("the patch applied to a reordered list")
	}
}
