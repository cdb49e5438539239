package kube

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWithoutServerMetadata(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "c", "namespace": "demo", "labels": map[string]any{"app": "web"},
			"resourceVersion": "7", "uid": "u", "generation": int64(2), "creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields": []any{map[string]any{"manager": "kubectl"}}, "selfLink": "/api/v1/…",
			"deletionTimestamp": "2026-01-02T00:00:00Z", "deletionGracePeriodSeconds": int64(30),
		},
	}}
	orig := u.DeepCopy()
	got := WithoutServerMetadata(u)
	want := map[string]any{"name": "c", "namespace": "demo", "labels": map[string]any{"app": "web"}}
	if !reflect.DeepEqual(got.Object["metadata"], want) {
		t.Errorf("metadata = %v, want %v", got.Object["metadata"], want)
	}
	if !reflect.DeepEqual(u, orig) {
		t.Error("WithoutServerMetadata changed its argument")
	}
}

func TestRemoveControllerAnnotations(t *testing.T) {
	for _, tt := range []struct {
		apiVersion, kind string
		annotations      map[string]any
		want             any // metadata.annotations after; nil when removed
	}{
		{"apps/v1", "Deployment", map[string]any{"deployment.kubernetes.io/revision": "3", "team": "a"}, map[string]any{"team": "a"}},
		{"apps/v1", "Deployment", map[string]any{"deployment.kubernetes.io/revision": "3"}, nil},
		{"apps/v1", "DaemonSet", map[string]any{"deprecated.daemonset.template.generation": "4"}, nil},
		{"apps/v1", "Deployment", map[string]any{"deprecated.daemonset.template.generation": "4"}, map[string]any{"deprecated.daemonset.template.generation": "4"}},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": tt.apiVersion, "kind": tt.kind,
			"metadata": map[string]any{"name": "x", "annotations": tt.annotations},
		}}
		RemoveControllerAnnotations(u)
		got := u.Object["metadata"].(map[string]any)["annotations"]
		if tt.want == nil && got != nil || tt.want != nil && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %v: annotations after = %v, want %v", tt.kind, tt.annotations, got, tt.want)
		}
	}
}

func TestIsUpshiftManager(t *testing.T) {
	for _, m := range []string{FieldManager, ImageFieldManager, JobFieldManager, RecreateFieldManager, RestoreFieldManager} {
		if !IsUpshiftManager(m) {
			t.Errorf("IsUpshiftManager(%q) = false", m)
		}
	}
	for _, m := range []string{"", "kubectl", "upshifter", "kube-controller-manager", "helm"} {
		if IsUpshiftManager(m) {
			t.Errorf("IsUpshiftManager(%q) = true", m)
		}
	}
}
