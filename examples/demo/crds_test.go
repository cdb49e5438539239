package demo_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every version ships the same 3 CRDs, labelled with its version, and
// keeps v1beta1 as the storage version: a CRD that stored objects in a
// newer version could not be rolled back to one without it.
func TestCRDsStayRollbackSafe(t *testing.T) {
	for _, v := range versions {
		crds := 0
		for _, o := range load(t, v).objects {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			crds++
			if got := o.GetLabels()["app.kubernetes.io/version"]; got != v {
				t.Errorf("%s: CRD %s labelled version %q", v, o.GetName(), got)
			}
			vers, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
			var storage []string
			for _, x := range vers {
				if x.(map[string]any)["storage"] == true {
					storage = append(storage, x.(map[string]any)["name"].(string))
				}
			}
			if len(storage) != 1 || storage[0] != "v1beta1" {
				t.Errorf("%s: CRD %s stores %v, want [v1beta1]", v, o.GetName(), storage)
			}
		}
		if crds != 3 {
			t.Errorf("%s: %d CRDs, want 3", v, crds)
		}
	}
}
