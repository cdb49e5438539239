// Package crdfixture makes, on the test cluster, a CRD whose objects were
// stored as v1alpha1 before v1 became the storage version, for the tests
// of preflight's stored-versions check and of the runner's read-ahead,
// which judges CRDs the same way. Test support only.
package crdfixture

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// CRD is the YAML of gadgets.<group>: versions as "name" (served) or
// "name*" (served, storage). It carries Helm's ownership marks, so Helm's
// release default/addon may adopt it.
func CRD(group string, versions ...string) string {
	var vs strings.Builder
	for _, v := range versions {
		name, storage := strings.CutSuffix(v, "*")
		fmt.Fprintf(&vs, "  - name: %s\n    served: true\n    storage: %t\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n", name, storage)
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.%s
  # Helm's ownership marks: release default/addon may take it over.
  labels: {app.kubernetes.io/managed-by: Helm}
  annotations: {meta.helm.sh/release-name: addon, meta.helm.sh/release-namespace: default}
spec:
  group: %s
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
%s`, group, group, vs.String())
}

// Fixture is gadgets.<Group> with objects in NS stored as v1alpha1, and
// v1 now the storage version: status.storedVersions is [v1alpha1 v1].
type Fixture struct {
	T     *testing.T
	Ctx   context.Context
	Dyn   dynamic.Interface
	Group string
	NS    string
}

// New makes the fixture with that many objects; the CRD is deleted with t.
func New(t *testing.T, group string, objects int) *Fixture {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{T: t, Ctx: ctx, Dyn: dyn, Group: group, NS: testenv.Namespace(t, ctx, cs, "removals")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = dyn.Resource(kube.CRDResource).Delete(ctx, "gadgets."+group, metav1.DeleteOptions{})
	})
	f.Apply(CRD(group, "v1alpha1*"))
	for i := range objects {
		g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Gadget",
			"metadata": map[string]any{"name": fmt.Sprintf("g%d", i)}, "spec": map[string]any{"size": i}}}
		if _, err := dyn.Resource(f.Gadgets("v1alpha1")).Namespace(f.NS).Create(ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.Apply(CRD(group, "v1alpha1", "v1*"))
	if got := f.StoredVersions(); strings.Join(got, ",") != "v1alpha1,v1" {
		t.Fatalf("status.storedVersions = %v after v1 became the storage version, want [v1alpha1 v1]", got)
	}
	return f
}

// Gadgets is the gadgets resource at version.
func (f *Fixture) Gadgets(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: f.Group, Version: version, Resource: "gadgets"}
}

// Apply creates or updates the CRD and waits until it is established.
func (f *Fixture) Apply(doc string) {
	f.T.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		f.T.Fatal(err)
	}
	if _, err := f.Dyn.Resource(kube.CRDResource).Apply(f.Ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		f.T.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(f.Ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := f.Dyn.Resource(kube.CRDResource).Get(ctx, u.GetName(), metav1.GetOptions{})
		return err == nil && kube.CRDEstablished(got), nil
	})
	if err != nil {
		f.T.Fatalf("CRD %s not established: %v", u.GetName(), err)
	}
}

// Live is the CRD as the cluster holds it.
func (f *Fixture) Live() *unstructured.Unstructured {
	f.T.Helper()
	got, err := f.Dyn.Resource(kube.CRDResource).Get(f.Ctx, "gadgets."+f.Group, metav1.GetOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	return got
}

// StoredVersions is the CRD's status.storedVersions.
func (f *Fixture) StoredVersions() []string {
	v, _, _ := unstructured.NestedStringSlice(f.Live().Object, "status", "storedVersions")
	return v
}

// Migrate does what preflight's fix says: rewrites every object in the
// storage version, then takes v1alpha1 out of status.storedVersions.
func (f *Fixture) Migrate() {
	f.T.Helper()
	ri := f.Dyn.Resource(f.Gadgets("v1")).Namespace(f.NS)
	list, err := ri.List(f.Ctx, metav1.ListOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	for i := range list.Items {
		if _, err := ri.Update(f.Ctx, &list.Items[i], metav1.UpdateOptions{}); err != nil {
			f.T.Fatal(err)
		}
	}
	crd := f.Live()
	if err := unstructured.SetNestedStringSlice(crd.Object, []string{"v1"}, "status", "storedVersions"); err != nil {
		f.T.Fatal(err)
	}
	if _, err := f.Dyn.Resource(kube.CRDResource).UpdateStatus(f.Ctx, crd, metav1.UpdateOptions{}); err != nil {
		f.T.Fatal(err)
	}
}

// Plan is a plan of one stage whose crds step applies doc, resolved as
// a run holds it.
func Plan(t *testing.T, doc string) *resolve.Plan {
	t.Helper()
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{{
		Name:  "crds",
		Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{Inline: doc}}}},
	}}}}
	r, err := resolve.FromSources(p, map[string][]byte{"spec.stages[0].steps[0].crds": []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ProblemAt is the first problem at the field path whose message has
// every want, or nil.
func ProblemAt(errs field.ErrorList, path string, wants ...string) *field.Error {
	for _, e := range errs {
		if e.Field != path {
			continue
		}
		ok := true
		for _, w := range wants {
			ok = ok && strings.Contains(e.Error(), w)
		}
		if ok {
			return e
		}
	}
	return nil
}
