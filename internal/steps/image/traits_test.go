package image

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An image step's rollout writes ReplicaSets, pods and their endpoints: a
// stage backed up while it runs must hold none of them.
func TestReachIsWhatARolloutWrites(t *testing.T) {
	kinds := (&Executor{}).Reach().Kinds
	for _, k := range []schema.GroupKind{{Kind: "Pod"}, {Group: "apps", Kind: "ReplicaSet"}, {Group: "apps", Kind: "ControllerRevision"}, {Group: "discovery.k8s.io", Kind: "EndpointSlice"}} {
		if !slices.Contains(kinds, k) {
			t.Errorf("Reach().Kinds = %v, want %v among them", kinds, k)
		}
	}
}
