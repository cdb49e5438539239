package install_test

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func toUnstructured(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: kind}
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// unstructuredMap reads a map[string]string at path.
func unstructuredMap(obj map[string]any, path ...string) (map[string]string, bool, error) {
	return unstructured.NestedStringMap(obj, path...)
}

// selects says whether selector selects an object with labels: every
// key of a non-empty selector is among the labels, with the same value.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func unstructuredSlice(obj map[string]any, path ...string) ([]any, bool, error) {
	return unstructured.NestedSlice(obj, path...)
}
