package kube

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func versioned(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

func objs(us ...*unstructured.Unstructured) []*unstructured.Unstructured { return us }

func TestFenceOfAWrite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cached  []*unstructured.Unstructured
		want    bool
		missing []string
	}{
		{"the cache still has the version before the write", objs(versioned("web", "100")), false, nil},
		{"the cache has the write", objs(versioned("web", "120")), true, nil},
		{"the cache has a later version", objs(versioned("web", "130")), true, nil},
		{"the cache does not hold it: ask the API server", nil, false, []string{"web"}},
		{"a version that does not parse lifts the fence", objs(versioned("web", "not-a-number")), true, nil},
	} {
		f := fenceOfObject(versioned("web", "120"))
		got, missing := f.fresh(tt.cached)
		if got != tt.want || !slices.Equal(missing, tt.missing) {
			t.Errorf("%s: fresh = %v, missing %v; want %v, %v", tt.name, got, missing, tt.want, tt.missing)
		}
	}
}

func TestFenceOfAList(t *testing.T) {
	list := func() *fence {
		l := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*versioned("a", "50"), *versioned("b", "90")}}
		l.SetResourceVersion("200")
		return fenceOfList(l)
	}
	for _, tt := range []struct {
		name    string
		cached  []*unstructured.Unstructured
		want    bool
		missing []string
	}{
		{"as listed", objs(versioned("a", "50"), versioned("b", "90")), true, nil},
		{"b older than listed", objs(versioned("a", "50"), versioned("b", "80")), false, nil},
		{"b not in the cache: ask the API server", objs(versioned("a", "50")), false, []string{"b"}},
		{"c, gone before the list, still cached", objs(versioned("a", "50"), versioned("b", "90"), versioned("c", "60")), false, nil},
		{"c created after the list", objs(versioned("a", "50"), versioned("b", "90"), versioned("c", "205")), true, nil},
	} {
		got, missing := list().fresh(tt.cached)
		if got != tt.want || !slices.Equal(missing, tt.missing) {
			t.Errorf("%s: fresh = %v, missing %v; want %v, %v", tt.name, got, missing, tt.want, tt.missing)
		}
	}
	// The API server said b is gone: the fence no longer waits for it.
	f := list()
	f.gone("b")
	if got, missing := f.fresh(objs(versioned("a", "50"))); !got || len(missing) > 0 {
		t.Errorf("after b is gone: fresh = %v, missing %v; want true", got, missing)
	}
}
