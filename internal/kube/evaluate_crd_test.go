package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// A CRD is Current only once the names the API server accepted are its
// spec's: right after another client changed spec.names, its conditions
// still say Established and NamesAccepted for the old names.
func TestEvaluateCRDWaitsForItsNamesToBeAccepted(t *testing.T) {
	t.Parallel()
	crd := func(specShort, acceptedShort []any, namesAccepted string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets.example.com", "generation": int64(2)},
			"spec": map[string]any{"group": "example.com", "names": map[string]any{
				"kind": "Gadget", "plural": "gadgets", "shortNames": specShort,
			}},
			"status": map[string]any{
				"acceptedNames": map[string]any{"kind": "Gadget", "plural": "gadgets", "shortNames": acceptedShort},
				"conditions": []any{
					map[string]any{"type": "NamesAccepted", "status": namesAccepted, "reason": "ShortNamesConflict"},
					map[string]any{"type": "Established", "status": "True"},
				},
			},
		}}
	}
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		want status.Status
	}{
		{"names accepted", crd([]any{"gd"}, []any{"gd"}, "True"), status.CurrentStatus},
		{"new names not accepted yet", crd([]any{"widgets"}, []any{"gd"}, "True"), status.InProgressStatus},
		{"new names clash", crd([]any{"widgets"}, []any{"gd"}, "False"), status.FailedStatus},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if h := Evaluate(tt.obj, Related{}); h.Status != tt.want {
				t.Errorf("Evaluate = %s (%s), want %s", h.Status, h.Message, tt.want)
			}
		})
	}
}
