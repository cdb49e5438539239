package manifests

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// applyRank orders what other objects depend on first: a namespace before
// what lives in it, a CRD before its custom resources.
func applyRank(o *unstructured.Unstructured) int {
	gvk := o.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace":
		return 0
	case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
		return 1
	}
	return 2
}

// applyOrder sorts a copy of objs by rank, keeping source order within one.
func applyOrder(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(out, func(i, j int) bool { return applyRank(out[i]) < applyRank(out[j]) })
	return out
}

func isCRD(o *unstructured.Unstructured) bool { return applyRank(o) == 1 }
