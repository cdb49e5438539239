package manifests

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestApplyOrder(t *testing.T) {
	obj := func(apiVersion, kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		return u
	}
	in := []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "web"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com"),
		obj("v1", "ConfigMap", "cfg"),
		obj("v1", "Namespace", "demo"),
		obj("example.com/v1", "Widget", "w"),
		obj("v1", "Namespace", "other"),
		obj("example.com/v1", "Namespace", "not-core"),
	}
	var got []string
	for _, o := range applyOrder(in) {
		got = append(got, o.GetName())
	}
	want := "[demo other widgets.example.com web cfg w not-core]"
	if fmt.Sprint(got) != want {
		t.Errorf("applyOrder = %v, want %s", got, want)
	}
	if in[0].GetName() != "web" {
		t.Errorf("applyOrder reordered its input")
	}
}
