package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/kube"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.upshift.dev
spec:
  group: e2e.upshift.dev
  scope: Namespaced
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size:
                type: integer
                minimum: 1
              color:
                type: string
`

func fromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatalf("parse YAML: %v", err)
	}
	return u
}

// TestCRDServerSideApply: a CRD applied server-side becomes Established,
// after which a custom resource of it can be applied server-side, read
// back, and waited for by kind (the Waiter learns the new kind).
func TestCRDServerSideApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	crd := fromYAML(t, widgetCRD)
	data, err := crd.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.dyn.Resource(crdResource).Patch(e.ctx, crd.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: fieldManager, Force: ptr(true)}); err != nil {
		t.Fatalf("apply CRD: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.dyn.Resource(crdResource).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete CRD: %v", err)
		}
	})
	start := time.Now()
	h, err := e.w.WaitCRDEstablished(e.ctx, crd.GetName(), waitTimeout)
	if err != nil {
		t.Fatalf("wait CRD established: %v", err)
	}
	t.Logf("CRD Established after %s: %s", time.Since(start).Round(time.Millisecond), h)
	got, err := e.dyn.Resource(crdResource).Get(e.ctx, crd.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !conditionTrue(t, got, "Established") || !conditionTrue(t, got, "NamesAccepted") {
		t.Errorf("CRD judged Current, but conditions are %v", got.Object["status"])
	}

	// A custom resource, applied server-side right after Established.
	widgets := schema.GroupVersionResource{Group: "e2e.upshift.dev", Version: "v1", Resource: "widgets"}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.upshift.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "gear", "namespace": e.ns},
		"spec":       map[string]any{"size": int64(3), "color": "blue"},
	}}
	if _, err := e.dyn.Resource(widgets).Namespace(e.ns).Apply(e.ctx, "gear", w,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		t.Fatalf("apply widget: %v", err)
	}
	back, err := e.dyn.Resource(widgets).Namespace(e.ns).Get(e.ctx, "gear", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read widget back: %v", err)
	}
	size, _, _ := unstructured.NestedInt64(back.Object, "spec", "size")
	color, _, _ := unstructured.NestedString(back.Object, "spec", "color")
	if size != 3 || color != "blue" {
		t.Errorf("widget spec read back = %v, want size 3 and color blue", back.Object["spec"])
	}
	applied := false
	for _, mf := range back.GetManagedFields() {
		if mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			applied = true
		}
	}
	if !applied {
		t.Errorf("widget has no Apply managed fields of %q: %+v", fieldManager, back.GetManagedFields())
	}

	// The schema is enforced: server-side apply of an invalid object fails.
	bad := w.DeepCopy()
	bad.Object["spec"] = map[string]any{"size": int64(0)}
	_, err = e.dyn.Resource(widgets).Namespace(e.ns).Apply(e.ctx, "gear", bad, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if !apierrors.IsInvalid(err) {
		t.Errorf("apply widget with size 0: err = %v, want Invalid (minimum 1)", err)
	}

	// The Waiter resolves the new kind and judges the (status-less) widget.
	h, err = e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "e2e.upshift.dev/v1", Kind: "Widget", Namespace: e.ns, Name: "gear"}, waitTimeout)
	if err != nil || !h.Current() {
		t.Errorf("wait widget: health %s, err %v; want Current", h, err)
	}
}

// conditionTrue reports whether the object's status has the condition
// type with status "True".
func conditionTrue(t *testing.T, u *unstructured.Unstructured, typ string) bool {
	t.Helper()
	conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		t.Fatalf("status.conditions: %v", err)
	}
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}
