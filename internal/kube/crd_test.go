package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func crdAnswer(conditions []any, accepted map[string]any) *unstructured.Unstructured {
	names := map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}
	status := map[string]any{"conditions": conditions}
	if accepted != nil {
		status["acceptedNames"] = accepted
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec":     map[string]any{"group": "example.com", "scope": "Namespaced", "names": names},
		"status":   status,
	}}
}

func TestCRDEstablished(t *testing.T) {
	established := map[string]any{"type": "Established", "status": "True"}
	accepted := map[string]any{"type": "NamesAccepted", "status": "True"}
	sameNames := map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}
	oldNames := map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": []any{"wd"}}
	for _, tt := range []struct {
		name string
		crd  *unstructured.Unstructured
		want bool
	}{
		{"an update's answer: established under its names", crdAnswer([]any{established, accepted}, sameNames), true},
		{"a create's answer: no conditions yet", crdAnswer(nil, nil), false},
		{"names changed, not accepted yet", crdAnswer([]any{established, accepted}, oldNames), false},
		{"names not accepted", crdAnswer([]any{established, map[string]any{"type": "NamesAccepted", "status": "False"}}, sameNames), false},
		{"not established", crdAnswer([]any{map[string]any{"type": "Established", "status": "False"}, accepted}, sameNames), false},
	} {
		if got := CRDEstablished(tt.crd); got != tt.want {
			t.Errorf("%s: CRDEstablished = %v, want %v", tt.name, got, tt.want)
		}
	}
}
