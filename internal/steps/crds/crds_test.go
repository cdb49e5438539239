package crds_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/crds"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdYAML is a namespaced CRD of group, with its kind (plural: lowercase
// kind + "s").
func crdYAML(group, kind string) string {
	plural := strings.ToLower(kind) + "s"
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  names: {kind: %[2]s, plural: %[3]s, listKind: %[2]sList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, kind, plural)
}

func TestCRDsApplyAndWaitEstablished(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	group := "g" + rand.String(8) + ".upshift.test"
	objs := clienttest.Objects(t, crdYAML(group, "Widget")+"---\n"+crdYAML(group, "Gadget"))
	for _, o := range objs {
		e.Cleanup(t, func(ctx context.Context) error {
			return e.Dynamic.Resource(crdResource).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		})
	}
	ex, err := crds.New(v1alpha1.CRDsStep{MinCount: 2}, objs, time.Minute, e.Applier, e.Waiter)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := ex.Targets(context.Background())
	if err != nil || len(targets) != 2 || targets[0].Name != "widgets."+group || targets[1].Kind != "CustomResourceDefinition" {
		t.Fatalf("Targets = %v, %v", targets, err)
	}

	// Run twice: the second run (a resume after success) changes nothing
	// and succeeds too.
	for run := 1; run <= 2; run++ {
		res, err := ex.Run(context.Background())
		if err != nil || res.Status != step.Succeeded {
			t.Fatalf("run %d: Run = %+v, %v", run, res, err)
		}
		if !strings.Contains(res.Message, "2 CRDs established") || !strings.Contains(res.Message, "gadgets."+group) {
			t.Errorf("run %d: message %q", run, res.Message)
		}
		// Established already when Run returns, not some time later.
		for _, o := range objs {
			crd, err := e.Dynamic.Resource(crdResource).Get(context.Background(), o.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !established(crd) {
				t.Errorf("run %d: %s is not Established when Run returned", run, o.GetName())
			}
			if !managedByUpshift(crd) {
				t.Errorf("run %d: %s is not applied by field manager upshift", run, o.GetName())
			}
		}
	}
	// The new kind is usable at once by the next step.
	cr := clienttest.Objects(t, fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w, namespace: %s}\n", group, e.NS))[0]
	if _, err := e.Applier.Apply(context.Background(), cr); err != nil {
		t.Errorf("apply a Widget after the step: %v", err)
	}
}

func TestCRDsMinCount(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	group := "g" + rand.String(8) + ".upshift.test"
	objs := clienttest.Objects(t, crdYAML(group, "Widget")+"---\n"+crdYAML(group, "Gadget"))
	ex, err := crds.New(v1alpha1.CRDsStep{MinCount: 3}, objs, time.Minute, e.Applier, e.Waiter)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := step.Failure("the source holds 2 CRDs, minCount is 3"); res != want {
		t.Errorf("Run = %+v, want %+v", res, want)
	}
	// Nothing was applied.
	for _, o := range objs {
		if _, err := e.Dynamic.Resource(crdResource).Get(context.Background(), o.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s exists after a minCount failure (get: %v)", o.GetName(), err)
		}
	}
}

// A CRD whose names clash with another's is never Established: the step
// fails at once, naming it, instead of waiting out its timeout. The two
// are applied side by side, so either may be the one the API server
// refuses.
func TestCRDsNamesConflictFailsFast(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	group := "g" + rand.String(8) + ".upshift.test"
	clash := strings.Replace(crdYAML(group, "Gadget"), "kind: Gadget,", "kind: Widget,", 1)
	objs := clienttest.Objects(t, crdYAML(group, "Widget")+"---\n"+clash)
	for _, o := range objs {
		e.Cleanup(t, func(ctx context.Context) error {
			return e.Dynamic.Resource(crdResource).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		})
	}
	ex, err := crds.New(v1alpha1.CRDsStep{}, objs, 2*time.Minute, e.Applier, e.Waiter)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := ex.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != step.Failed || !strings.Contains(res.Message, "gadgets."+group) && !strings.Contains(res.Message, "widgets."+group) {
		t.Errorf("Run = %+v, want Failed naming gadgets.%s or widgets.%s", res, group, group)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Run took %s: it waited instead of failing", d)
	}
}

func TestCRDsTimeout(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	group := "g" + rand.String(8) + ".upshift.test"
	objs := clienttest.Objects(t, crdYAML(group, "Widget"))
	e.Cleanup(t, func(ctx context.Context) error {
		return e.Dynamic.Resource(crdResource).Delete(ctx, objs[0].GetName(), metav1.DeleteOptions{})
	})
	ex, err := crds.New(v1alpha1.CRDsStep{}, objs, time.Nanosecond, e.Applier, e.Waiter)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != step.Failed || !strings.HasPrefix(res.Message, "timed out after 1ns") {
		t.Errorf("Run = %+v, want Failed, timed out after 1ns", res)
	}
}

func TestNewRejectsOtherKinds(t *testing.T) {
	objs := clienttest.Objects(t, crdYAML("g.upshift.test", "Widget")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: stray, namespace: demo}\n")
	_, err := crds.New(v1alpha1.CRDsStep{Source: v1alpha1.Source{Path: "crds/"}}, objs, time.Minute, nil, nil)
	if !errors.Is(err, crds.ErrNotCRD) || !strings.Contains(err.Error(), "configmap demo/stray") || !strings.Contains(err.Error(), "crds/") {
		t.Errorf("New = %v, want ErrNotCRD naming configmap demo/stray and the source", err)
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func managedByUpshift(o *unstructured.Unstructured) bool {
	for _, mf := range o.GetManagedFields() {
		if mf.Manager == "upshift" && mf.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
