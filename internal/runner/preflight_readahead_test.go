package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// Preflight judges the plan's CRDs from the first stage's snapshot when
// that was read ahead beside it (Session.ReadAhead): each CRD is read
// once, and a CRD that drops a stored version is refused as when
// preflight reads it itself.
func TestPreflightReadsTheCRDsTheSnapshotReadAheadHolds(t *testing.T) {
	group := "ahead.removals.upshift.test"
	f := newCRDFixture(t, group, 2)
	drop := gadgetCRD(group, "v1*")
	p := fromSources(t, crdsPlan(drop), map[string][]byte{"spec.stages[0].steps[0].crds": []byte(drop)})

	gets := &countGets{suffix: "/customresourcedefinitions/gadgets." + group}
	cfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
	cfg.Wrap(gets.wrap)
	s, err := Open(cfg, Options{Namespace: "ahead-" + rand.String(5), LeaseDuration: 4 * time.Second, LeaseRenew: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ready(f.ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(testenv.Cluster(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// An earlier run's lease, released: the reads ahead may begin.
	h, err := lease.Acquire(f.ctx, cs, lease.Config{Namespace: s.opts.Namespace, Identity: lease.CurrentIdentity("earlier")})
	if err != nil {
		t.Fatal(err)
	}
	h.Release()

	s.ReadAhead(f.ctx, p)
	errs := s.Preflight(f.ctx, p)
	if problemAt(errs, "spec.stages[0].steps[0].crds", "gadgets."+group, "lists v1alpha1", "2 gadgets."+group+" exist") == nil {
		t.Fatalf("want the dropped stored version refused as without the read-ahead; got %v", errs)
	}
	if s.preLease.snapshot(f.ctx, p) == nil {
		t.Fatal("nothing was read ahead")
	}
	if n := gets.n.Load(); n != 1 {
		t.Errorf("the CRD was read %d times by the read-ahead and preflight, want once", n)
	}
}

// The CRD fixture of internal/preflight's stored-version tests, which
// this test of the session's read-ahead shares.

// gadgetCRD is the YAML of gadgets.<group>: versions as "name" (served)
// or "name*" (served, storage). Helm's release default/addon (helmPlan)
// may adopt it.
func gadgetCRD(group string, versions ...string) string {
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

// crdFixture is a CRD whose objects were stored as v1alpha1 before v1
// became the storage version: status.storedVersions is [v1alpha1 v1].
type crdFixture struct {
	t     *testing.T
	ctx   context.Context
	dyn   dynamic.Interface
	group string
	ns    string
}

func newCRDFixture(t *testing.T, group string, objects int) *crdFixture {
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
	f := &crdFixture{t: t, ctx: ctx, dyn: dyn, group: group, ns: testenv.Namespace(t, ctx, cs, "removals")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = dyn.Resource(kube.CRDResource).Delete(ctx, "gadgets."+group, metav1.DeleteOptions{})
	})
	f.applyCRD(gadgetCRD(group, "v1alpha1*"))
	for i := range objects {
		g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Gadget",
			"metadata": map[string]any{"name": fmt.Sprintf("g%d", i)}, "spec": map[string]any{"size": i}}}
		if _, err := dyn.Resource(f.gadgets("v1alpha1")).Namespace(f.ns).Create(ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.applyCRD(gadgetCRD(group, "v1alpha1", "v1*"))
	if got := f.storedVersions(); strings.Join(got, ",") != "v1alpha1,v1" {
		t.Fatalf("status.storedVersions = %v after v1 became the storage version, want [v1alpha1 v1]", got)
	}
	return f
}

func (f *crdFixture) gadgets(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: f.group, Version: version, Resource: "gadgets"}
}

// applyCRD creates or updates the CRD and waits until it is established.
func (f *crdFixture) applyCRD(doc string) {
	f.t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.dyn.Resource(kube.CRDResource).Apply(f.ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		f.t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(f.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := f.dyn.Resource(kube.CRDResource).Get(ctx, u.GetName(), metav1.GetOptions{})
		return err == nil && kube.CRDEstablished(got), nil
	})
	if err != nil {
		f.t.Fatalf("CRD %s not established: %v", u.GetName(), err)
	}
}

func (f *crdFixture) crd() *unstructured.Unstructured {
	f.t.Helper()
	got, err := f.dyn.Resource(kube.CRDResource).Get(f.ctx, "gadgets."+f.group, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

func (f *crdFixture) storedVersions() []string {
	v, _, _ := unstructured.NestedStringSlice(f.crd().Object, "status", "storedVersions")
	return v
}

func crdsPlan(doc string) *v1alpha1.UpgradePlan {
	return &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{{
		Name:  "crds",
		Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{Inline: doc}}}},
	}}}}
}

func fromSources(t *testing.T, p *v1alpha1.UpgradePlan, sources map[string][]byte) *resolve.Plan {
	t.Helper()
	r, err := resolve.FromSources(p, sources)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// problemAt is the first problem at the field path whose message has
// every want, or nil.
func problemAt(errs field.ErrorList, path string, wants ...string) *field.Error {
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
