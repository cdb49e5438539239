package kube

import (
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
	f := fenceOfObject(versioned("web", "120"))
	for _, tt := range []struct {
		name     string
		cached   []*unstructured.Unstructured
		lastSync string
		want     bool
	}{
		{"the cache still has the version before the write", objs(versioned("web", "100")), "110", false},
		{"the cache has the write", objs(versioned("web", "120")), "120", true},
		{"the cache has a later version", objs(versioned("web", "130")), "130", true},
		{"the cache has not seen the object yet", nil, "110", false},
		{"the object was deleted after the write, and the cache saw it", nil, "125", true},
		{"a version that does not parse lifts the fence", objs(versioned("web", "not-a-number")), "110", true},
	} {
		if got := f.fresh(tt.cached, tt.lastSync); got != tt.want {
			t.Errorf("%s: fresh = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFenceOfAList(t *testing.T) {
	l := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*versioned("a", "50"), *versioned("b", "90")}}
	l.SetResourceVersion("200")
	f := fenceOfList(l)
	for _, tt := range []struct {
		name     string
		cached   []*unstructured.Unstructured
		lastSync string
		want     bool
	}{
		{"as listed", objs(versioned("a", "50"), versioned("b", "90")), "200", true},
		{"b older than listed", objs(versioned("a", "50"), versioned("b", "80")), "190", false},
		{"b not arrived yet", objs(versioned("a", "50")), "85", false},
		{"b deleted since, and seen", objs(versioned("a", "50")), "210", true},
		{"c, gone before the list, still cached", objs(versioned("a", "50"), versioned("b", "90"), versioned("c", "60")), "200", false},
		{"c created after the list", objs(versioned("a", "50"), versioned("b", "90"), versioned("c", "205")), "205", true},
	} {
		if got := f.fresh(tt.cached, tt.lastSync); got != tt.want {
			t.Errorf("%s: fresh = %v, want %v", tt.name, got, tt.want)
		}
	}
}
