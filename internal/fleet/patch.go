package fleet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// StatusPatch is the JSON patch (RFC 6902) that takes a ClusterVersion's
// status from one to the next, nil when nothing changed. A fleet's status
// holds a line per cluster, thousands of them, and a step changes a few:
// the patch replaces only the clusters that changed (each guarded by a
// test of its id, so a list reordered meanwhile refuses the patch rather
// than mixing clusters up) and the top-level fields that changed. A new
// list of clusters (the spec's changed) replaces the whole status.
func StatusPatch(from, to v1alpha1.ClusterVersionStatus) ([]byte, error) {
	if !sameClusters(from.Clusters, to.Clusters) {
		return json.Marshal([]jsonPatchOp{{Op: "add", Path: "/status", Value: to}})
	}
	var ops []jsonPatchOp
	top, err := topLevel(from, to)
	if err != nil {
		return nil, err
	}
	ops = append(ops, top...)
	for i := range to.Clusters {
		if reflect.DeepEqual(from.Clusters[i], to.Clusters[i]) {
			continue
		}
		path := fmt.Sprintf("/status/clusters/%d", i)
		ops = append(ops,
			jsonPatchOp{Op: "test", Path: path + "/id", Value: to.Clusters[i].ID},
			jsonPatchOp{Op: "replace", Path: path, Value: to.Clusters[i]})
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}

// sameClusters tells whether the two lists name the same clusters in the
// same order (from may be the status before any was written).
func sameClusters(from, to []v1alpha1.FleetClusterStatus) bool {
	if len(from) != len(to) || len(from) == 0 {
		return false
	}
	for i := range from {
		if from[i].ID != to[i].ID {
			return false
		}
	}
	return true
}

// topLevel patches the status's fields other than clusters.
func topLevel(from, to v1alpha1.ClusterVersionStatus) ([]jsonPatchOp, error) {
	from.Clusters, to.Clusters = nil, nil
	o, err := asMap(from)
	if err != nil {
		return nil, err
	}
	n, err := asMap(to)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var ops []jsonPatchOp
	for _, k := range sorted {
		nv, inNew := n[k]
		ov, inOld := o[k]
		switch {
		case !inNew:
			ops = append(ops, jsonPatchOp{Op: "remove", Path: "/status/" + k})
		case !inOld || !reflect.DeepEqual(ov, nv):
			ops = append(ops, jsonPatchOp{Op: "add", Path: "/status/" + k, Value: nv})
		}
	}
	return ops, nil
}

func asMap(st v1alpha1.ClusterVersionStatus) (map[string]any, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
