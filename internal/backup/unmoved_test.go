package backup_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/step"
)

// A snapshot is unmoved while every object it holds keeps its version and
// every absent one stays absent; any write, deletion, re-creation under
// the same name or creation of an absent object moves it.
func TestUnmovedTellsWhetherASnapshotIsStillTrue(t *testing.T) {
	e := newEnv(t)
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	ref := func(name string) step.Ref {
		return step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: name}
	}
	create := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Data: map[string]string{"k": "v"}}
		if _, err := cms.Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	unmoved := func(refs ...step.Ref) bool {
		t.Helper()
		snap, err := e.b.Take(ctx(t), refs, backup.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := e.b.Unmoved(ctx(t), snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// A CRD's kind not served yet reads as absent, and stays so.
	notServed := step.Ref{APIVersion: "example.upshift.dev/v1", Kind: "Widget", Namespace: e.ns, Name: "w"}

	create("kept")
	create("written")
	create("deleted")
	create("recreated")
	refs := []step.Ref{ref("kept"), ref("written"), ref("deleted"), ref("recreated"), ref("absent"), notServed}

	snap, err := e.b.Take(ctx(t), refs, backup.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.b.Unmoved(ctx(t), snap, nil); err != nil || !ok {
		t.Fatalf("Unmoved right after Take = %v, %v; want true", ok, err)
	}

	moves := []struct {
		name string
		move func()
	}{
		{"written", func() {
			cm, err := cms.Get(ctx(t), "written", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["k"] = "w"
			if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"deleted", func() {
			if err := cms.Delete(ctx(t), "deleted", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"recreated", func() {
			if err := cms.Delete(ctx(t), "recreated", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			create("recreated")
		}},
		{"absent", func() { create("absent") }},
	}
	for _, m := range moves {
		before, err := e.b.Take(ctx(t), []step.Ref{ref("kept"), ref(m.name), notServed}, backup.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		m.move()
		if ok, err := e.b.Unmoved(ctx(t), before, nil); err != nil || ok {
			t.Errorf("%s: Unmoved after the change = %v, %v; want false", m.name, ok, err)
		}
	}
	if !unmoved(ref("kept"), ref("absent-still"), notServed) {
		t.Error("a snapshot of objects nobody touched reads as moved")
	}
	// An object whose kind is served no more (its CRD deleted) is gone.
	gone := &backup.Snapshot{Entries: []backup.Entry{{Ref: notServed, Object: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": notServed.APIVersion, "kind": notServed.Kind, "metadata": map[string]any{"name": "w", "namespace": e.ns, "uid": "u", "resourceVersion": "1"},
	}}}}}
	if ok, err := e.b.Unmoved(ctx(t), gone, nil); err != nil || ok {
		t.Errorf("Unmoved of an object whose kind is not served = %v, %v; want false", ok, err)
	}
}

// Many objects of one resource and namespace (a platform's CRDs) are
// checked in one list of their metadata: it tells a write to any one of
// them, and an absent one created, as the reads one by one do.
func TestUnmovedReadsManyObjectsOfAKindInOneList(t *testing.T) {
	e := newEnv(t)
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	var refs []step.Ref
	for i := range 10 {
		name := fmt.Sprintf("cm-%d", i)
		refs = append(refs, step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: name})
		if i == 9 {
			continue // absent
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Data: map[string]string{"k": "v"}}
		if _, err := cms.Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	take := func() *backup.Snapshot {
		t.Helper()
		snap, err := e.b.Take(ctx(t), refs, backup.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	unmoved := func(snap *backup.Snapshot) bool {
		t.Helper()
		ok, err := e.b.Unmoved(ctx(t), snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	snap := take()
	if !unmoved(snap) {
		t.Fatal("a snapshot of objects nobody touched reads as moved")
	}
	patch := []byte(`{"data":{"k":"w"}}`)
	if _, err := cms.Patch(ctx(t), "cm-4", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if unmoved(snap) {
		t.Error("a write to one of many objects was not seen")
	}
	snap = take()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-9", Namespace: e.ns}}
	if _, err := cms.Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if unmoved(snap) {
		t.Error("an absent object created was not seen")
	}
}
