package manifests_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/manifests"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func deploymentYAML(ns, name, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
      - name: app
        image: %[3]s
`, ns, name, image)
}

func newExecutor(t *testing.T, e *clienttest.Env, y string, timeout time.Duration) *manifests.Executor {
	t.Helper()
	ex, err := manifests.New(v1alpha1.ManifestsStep{}, clienttest.Objects(t, y), timeout, e.Applier, e.Waiter)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// The Deployment comes first in the source and lives in the Namespace that
// comes last: the step applies the Namespace first.
func TestManifestsApplyInOrderAndWaitCurrent(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ns := clienttest.Name(t)
	e.Cleanup(t, func(ctx context.Context) error {
		return e.Clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	src := deploymentYAML(ns, "web", "registry.example/web:v1") + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: ` + ns + `}
data: {mode: fast}
---
apiVersion: v1
kind: Namespace
metadata: {name: ` + ns + `}
`
	ex := newExecutor(t, e, src, 2*time.Minute)
	targets, err := ex.Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(targets); got != fmt.Sprintf("[namespace %[1]s deployment %[1]s/web configmap %[1]s/web-config]", ns) {
		t.Errorf("Targets = %s", got)
	}
	for run := 1; run <= 2; run++ { // the second run is a resume after success
		res, err := ex.Run(context.Background())
		if err != nil || res.Status != step.Succeeded {
			t.Fatalf("run %d: Run = %+v, %v", run, res, err)
		}
		if res.Message != "applied 3 objects, all Current" {
			t.Errorf("run %d: message %q", run, res.Message)
		}
		d, err := e.Clientset.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.AvailableReplicas != 2 || d.Status.UpdatedReplicas != 2 {
			t.Errorf("run %d: deployment status %+v, want 2 available and updated when Run returns", run, d.Status)
		}
		cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(context.Background(), "web-config", metav1.GetOptions{})
		if err != nil || cm.Data["mode"] != "fast" {
			t.Errorf("run %d: configmap = %v, %v", run, cm, err)
		}
	}
}

func TestManifestsBrokenImageFailsEarlyNamingThePod(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	src := deploymentYAML(e.NS, "ok", "registry.example/ok:v1") + "---\n" + deploymentYAML(e.NS, "bad", "registry.example/bad:v2-broken")
	ex := newExecutor(t, e, src, 2*time.Minute)
	start := time.Now()
	res, err := ex.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	if res.Status != step.Failed {
		t.Fatalf("Run = %+v, want Failed", res)
	}
	for _, s := range []string{"deployment " + e.NS + "/bad", "pod " + e.NS + "/bad-", "CrashLoopBackOff"} {
		if !strings.Contains(res.Message, s) {
			t.Errorf("message %q does not contain %q", res.Message, s)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run took %s with a 2m timeout: it did not fail early", d)
	}
}

// A CRD and a resource of its kind in one source: the CRD is applied and
// Established before the resource.
func TestManifestsCustomResourceWithItsCRD(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	group := "g" + rand.String(8) + ".upshift.test"
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	e.Cleanup(t, func(ctx context.Context) error {
		return e.Dynamic.Resource(crds).Delete(ctx, "widgets."+group, metav1.DeleteOptions{})
	})
	src := fmt.Sprintf(`apiVersion: %[1]s/v1
kind: Widget
metadata: {name: w1, namespace: %[2]s}
spec: {size: 3}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, e.NS)
	res, err := newExecutor(t, e, src, time.Minute).Run(context.Background())
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	w, err := e.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(e.NS).Get(context.Background(), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the widget: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
		t.Errorf("widget spec.size = %d, want 3", size)
	}
}

func TestManifestsNamespaceRequired(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: homeless}\n"
	_, err := newExecutor(t, e, src, time.Minute).Run(context.Background())
	if !errors.Is(err, kube.ErrNamespaceRequired) || !strings.Contains(err.Error(), "configmap homeless") {
		t.Errorf("Run error = %v, want ErrNamespaceRequired naming configmap homeless", err)
	}
}

// Pods that cannot be scheduled keep the Deployment InProgress without
// failing: the step times out with the last thing it saw.
func TestManifestsTimeout(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	src := strings.Replace(deploymentYAML(e.NS, "stuck", "registry.example/web:v1"),
		"      containers:", "      nodeSelector: {upshift.test/none: \"true\"}\n      containers:", 1)
	start := time.Now()
	res, err := newExecutor(t, e, src, 3*time.Second).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	if res.Status != step.Failed || !strings.HasPrefix(res.Message, "timed out after 3s: deployment "+e.NS+"/stuck") {
		t.Errorf("Run = %+v, want Failed: timed out after 3s: deployment %s/stuck…", res, e.NS)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %s with a 3s timeout", d)
	}
}
