package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

const gadgetGroup = "removals.upshift.test"

var (
	crdsResource    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gadgetsResource = func(version string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: gadgetGroup, Version: version, Resource: "gadgets"}
	}
)

// gadgetsCRD is the YAML of gadgets.removals.upshift.test: versions as
// "name" (served) or "name*" (served, storage).
func gadgetsCRD(versions ...string) string {
	var vs strings.Builder
	for _, v := range versions {
		name, storage := strings.CutSuffix(v, "*")
		fmt.Fprintf(&vs, "  - name: %s\n    served: true\n    storage: %t\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n", name, storage)
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%s}
spec:
  group: %s
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
%s`, gadgetGroup, gadgetGroup, vs.String())
}

// TestPlanDroppingAStoredCRDVersionIsRefused: three objects were stored
// as v1alpha1 before v1 became the storage version, so the CRD's
// status.storedVersions is [v1alpha1 v1]. A plan whose crds step drops
// v1alpha1 is refused by `upshift plan` and `upshift apply` with exit 1,
// naming the step, the CRD, the version, the three objects and the fix,
// and nothing is written (the audit log shows no write by Upshift's user;
// the CRD's resourceVersion is unchanged). Once the objects are rewritten
// and storedVersions is [v1], the same plan passes and applies.
func TestPlanDroppingAStoredCRDVersionIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.applyCRD(gadgetsCRD("v1alpha1*"))
	for i := range 3 {
		g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gadgetGroup + "/v1alpha1", "kind": "Gadget",
			"metadata": map[string]any{"name": fmt.Sprintf("g%d", i)}, "spec": map[string]any{"size": i}}}
		if _, err := w.dyn.Resource(gadgetsResource("v1alpha1")).Namespace("default").Create(w.ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.applyCRD(gadgetsCRD("v1alpha1", "v1*"))
	if got := w.gadgetsStoredVersions(); strings.Join(got, ",") != "v1alpha1,v1" {
		t.Fatalf("status.storedVersions = %v, want [v1alpha1 v1]", got)
	}

	plan := filepath.Join(t.TempDir(), "plan.yaml")
	write(t, plan, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: drop-v1alpha1}
spec:
  version: 2.0.0
  stages:
  - name: crds
    steps:
    - name: gadgets
      crds:
        inline: |
`+indent(gadgetsCRD("v1*"), 10))
	writes := len(w.upshiftWrites())
	before := w.gadgetsCRD().GetResourceVersion()

	for _, cmd := range []string{"plan", "apply"} {
		r := w.mustExit(1, nil, cmd, "-f", plan)
		mustContain(t, "upshift "+cmd, r.stderr,
			"spec.stages[0].steps[0].crds", "gadgets."+gadgetGroup, "lists v1alpha1",
			"3 gadgets."+gadgetGroup+" exist", "migrate the stored objects to v1",
			"remove v1alpha1 from the CRD's status.storedVersions")
	}
	time.Sleep(time.Second) // the audit log is written asynchronously
	for _, e := range w.upshiftWrites()[writes:] {
		t.Errorf("a refused plan wrote: %s %s", e.Verb, e.Object())
	}
	if after := w.gadgetsCRD().GetResourceVersion(); after != before {
		t.Errorf("the CRD changed: resourceVersion %s, was %s", after, before)
	}

	w.migrateGadgets()
	r := w.mustExit(0, nil, "plan", "-f", plan)
	mustContain(t, "upshift plan after the migration", r.stdout, "preflight passed")
	w.mustExit(0, nil, "apply", "-f", plan)
	vs, _, _ := unstructured.NestedSlice(w.gadgetsCRD().Object, "spec", "versions")
	if len(vs) != 1 || vs[0].(map[string]any)["name"] != "v1" {
		t.Errorf("after apply: spec.versions = %v, want v1 alone", vs)
	}
}

// applyCRD creates or updates a CRD as the test's user and waits until it
// is established.
func (w *world) applyCRD(doc string) {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.dyn.Resource(crdsResource).Apply(w.ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		w.t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(w.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := w.dyn.Resource(crdsResource).Get(ctx, u.GetName(), metav1.GetOptions{})
		return err == nil && kube.CRDEstablished(got), nil
	})
	if err != nil {
		w.t.Fatalf("CRD %s not established: %v", u.GetName(), err)
	}
}

func (w *world) gadgetsCRD() *unstructured.Unstructured {
	w.t.Helper()
	crd, err := w.dyn.Resource(crdsResource).Get(w.ctx, "gadgets."+gadgetGroup, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return crd
}

func (w *world) gadgetsStoredVersions() []string {
	v, _, _ := unstructured.NestedStringSlice(w.gadgetsCRD().Object, "status", "storedVersions")
	return v
}

// migrateGadgets is the storage migration the refusal asks for: every
// object rewritten in the storage version, then v1alpha1 taken out of
// status.storedVersions.
func (w *world) migrateGadgets() {
	w.t.Helper()
	ri := w.dyn.Resource(gadgetsResource("v1")).Namespace("default")
	list, err := ri.List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for i := range list.Items {
		if _, err := ri.Update(w.ctx, &list.Items[i], metav1.UpdateOptions{}); err != nil {
			w.t.Fatal(err)
		}
	}
	crd := w.gadgetsCRD()
	if err := unstructured.SetNestedStringSlice(crd.Object, []string{"v1"}, "status", "storedVersions"); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.dyn.Resource(crdsResource).UpdateStatus(w.ctx, crd, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}
