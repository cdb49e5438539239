package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// applyEnv is one test's applier, a clientset to observe with, and a
// fresh namespace.
type applyEnv struct {
	cfg *rest.Config
	a   *Applier
	cs  kubernetes.Interface
	ns  string
}

func newApplyEnv(t *testing.T) *applyEnv {
	t.Helper()
	cfg := testenv.Cluster(t).RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := "apply-" + rand.String(6)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return &applyEnv{cfg: cfg, a: NewApplier(dyn, newMapper(t, cfg)), cs: cs, ns: ns}
}

func newMapper(t *testing.T, cfg *rest.Config) *restmapper.DeferredDiscoveryRESTMapper {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
}

func mustObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func configMap(t *testing.T, ns, name, value string) *unstructured.Unstructured {
	return mustObject(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {key: %q}\n", name, ns, value))
}

func TestApplyCreatesUpdatesAndTakesOver(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	ctx := context.Background()

	if _, err := e.a.Apply(ctx, configMap(t, e.ns, "cfg", "v1")); err != nil {
		t.Fatalf("Apply (create): %v", err)
	}
	// Another manager takes the field over; force lets upshift take it back
	// instead of failing with a conflict.
	other := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":%q},"data":{"key":"theirs","extra":"kept"}}`, e.ns))
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Patch(ctx, "cfg", types.ApplyPatchType, other, metav1.PatchOptions{FieldManager: "someone-else", Force: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	got, err := e.a.Apply(ctx, configMap(t, e.ns, "cfg", "v2"))
	if err != nil {
		t.Fatalf("Apply (update over another manager): %v", err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "key"); v != "v2" {
		t.Errorf("returned data.key = %q, want v2", v)
	}
	cm, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["key"] != "v2" || cm.Data["extra"] != "kept" {
		t.Errorf("data = %v, want key=v2 and the other manager's extra=kept", cm.Data)
	}
	managers := map[string]bool{}
	for _, mf := range cm.ManagedFields {
		managers[mf.Manager+"/"+string(mf.Operation)] = true
	}
	if !managers["upshift/Apply"] {
		t.Errorf("managers = %v, want upshift/Apply", managers)
	}

	// A fetched object (stale resourceVersion, managedFields) re-applies.
	fetched, err := e.a.Get(ctx, ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "cfg"})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	fetched.SetResourceVersion("1")
	if err := unstructured.SetNestedField(fetched.Object, "v3", "data", "key"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.a.Apply(ctx, fetched); err != nil {
		t.Fatalf("Apply of a fetched object: %v", err)
	}
}

func TestApplyNamespaceRequired(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	name := "no-ns-" + rand.String(5)
	_, err := e.a.Apply(context.Background(), configMap(t, "", name, "v"))
	if !errors.Is(err, ErrNamespaceRequired) {
		t.Fatalf("Apply = %v, want ErrNamespaceRequired", err)
	}
	if !strings.Contains(err.Error(), "configmap "+name) {
		t.Errorf("error %q does not name the object", err)
	}
	if _, err := e.cs.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("configmap landed in default: get = %v", err)
	}
}

func TestApplyPermanentErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	ctx := context.Background()
	start := time.Now()
	bad := mustObject(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_Valid, namespace: %s}\n", e.ns))
	if _, err := e.a.Apply(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("Apply of an invalid name = %v, want Invalid", err)
	}
	if _, err := e.a.Get(ctx, ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "missing"}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing object = %v, want NotFound", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("permanent errors took %s: they were retried", d)
	}
}

func TestDryRunApplyChangesNothing(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	ctx := context.Background()
	if _, err := e.a.Apply(ctx, configMap(t, e.ns, "cfg", "v1")); err != nil {
		t.Fatal(err)
	}
	preview, err := e.a.DryRunApply(ctx, configMap(t, e.ns, "cfg", "v2"))
	if err != nil {
		t.Fatalf("DryRunApply: %v", err)
	}
	if v, _, _ := unstructured.NestedString(preview.Object, "data", "key"); v != "v2" {
		t.Errorf("dry run returned data.key = %q, want v2", v)
	}
	if _, err := e.a.DryRunApply(ctx, configMap(t, e.ns, "new", "v1")); err != nil {
		t.Fatalf("DryRunApply of a new object: %v", err)
	}
	cm, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["key"] != "v1" {
		t.Errorf("after dry run data.key = %q, want v1", cm.Data["key"])
	}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(ctx, "new", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry run created an object: get = %v", err)
	}
}

// The applier's mapper cached discovery before the CRD existed; applying a
// custom resource after the CRD is Established must still resolve its kind.
func TestApplyCustomResourceAfterItsCRD(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	ctx := context.Background()
	group := "g" + rand.String(6) + ".upshift.test"
	// Warm the applier's discovery cache.
	if _, err := e.a.Apply(ctx, configMap(t, e.ns, "warm", "v")); err != nil {
		t.Fatal(err)
	}
	crd := mustObject(t, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group))
	if _, err := e.a.Apply(ctx, crd); err != nil {
		t.Fatalf("Apply CRD: %v", err)
	}
	t.Cleanup(func() {
		dyn, _ := dynamic.NewForConfig(e.cfg)
		_ = dyn.Resource(CRDResource).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	// A waiter of its own, so the applier's mapper is not reset for it.
	w, err := NewWaiterForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitCRDEstablished(ctx, "widgets."+group, 30*time.Second); err != nil {
		t.Fatalf("WaitCRDEstablished: %v", err)
	}
	cr := mustObject(t, fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w1, namespace: %s}\nspec: {size: 3}\n", group, e.ns))
	got, err := e.a.Apply(ctx, cr)
	if err != nil {
		t.Fatalf("Apply custom resource: %v", err)
	}
	if got.GetUID() == "" {
		t.Errorf("applied custom resource has no uid: %v", got)
	}

	// An update of the established CRD answers established: the crds
	// step waits for nothing. A names change is not, until accepted.
	crd.SetLabels(map[string]string{"release": "2"})
	updated, err := e.a.Apply(ctx, crd)
	if err != nil {
		t.Fatalf("Apply the CRD again: %v", err)
	}
	if !CRDEstablished(updated) {
		t.Errorf("the answer to an update of an established CRD is not established: %v", updated.Object["status"])
	}
	if err := unstructured.SetNestedStringSlice(crd.Object, []string{"wd"}, "spec", "names", "shortNames"); err != nil {
		t.Fatal(err)
	}
	renamed, err := e.a.Apply(ctx, crd)
	if err != nil {
		t.Fatalf("Apply the CRD with a short name: %v", err)
	}
	if CRDEstablished(renamed) {
		t.Errorf("the answer to a names change is established before the names were accepted: %v", renamed.Object["status"])
	}
}

func TestRefOf(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("demo")
	u.SetName("web")
	want := ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}
	if got := RefOf(u); got != want {
		t.Errorf("RefOf = %+v, want %+v", got, want)
	}
	if got := want.String(); got != "deployment demo/web" {
		t.Errorf("String() = %q", got)
	}
}
