package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The test platform: namespace shop with a Deployment web (env set inline,
// by another field manager, and from a fieldRef), a DaemonSet agent and a
// ConfigMap settings. Small enough that a run takes seconds.
const platformV1 = `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {level: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: example.com/shop/web:1.0.0
        env:
        - {name: MODE, value: prod}
        - name: NODE
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop, labels: {app: agent}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - {name: agent, image: example.com/shop/agent:1.0.0}
`

// installPlatform applies version 1 with upshift itself, then sets an env
// var on web with another field manager (as an operator's kubectl would):
// it must survive the upgrade.
func (w *world) installPlatform() {
	w.t.Helper()
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "platform.yaml"), platformV1)
	write(w.t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-1.0.0}
spec:
  version: 1.0.0
  stages:
  - name: install
    steps:
    - name: platform
      manifests: {path: platform.yaml}
`)
	w.mustExit(0, nil, "apply", "-f", filepath.Join(dir, "plan.yaml"))
	patch := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"OUT_OF_BAND","value":"kept"}]}]}}}}`
	force := true
	if _, err := w.cs.AppsV1().Deployments("shop").Patch(w.ctx, "web", types.ApplyPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "operator-kubectl", Force: &force}); err != nil {
		w.t.Fatalf("set env out of band: %v", err)
	}
}

// planOptions vary the upgrade plan the tests run.
type planOptions struct {
	name         string
	webTag       string // image tag for web
	agentTag     string
	autoRollback *bool
	webTimeout   string // step timeout of the web step
	httpGate     string // URL of an http gate after the workloads stage
	gateTimeout  string
}

// upgradePlan writes a three-stage plan: config (ConfigMap level 2),
// workloads (web and agent images), and checks (gates only in a stage with
// a no-op manifests step).
func (w *world) upgradePlan(o planOptions) string {
	w.t.Helper()
	if o.name == "" {
		o.name = "shop-2.0.0"
	}
	if o.webTag == "" {
		o.webTag = "2.0.0"
	}
	if o.agentTag == "" {
		o.agentTag = "2.0.0"
	}
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\", feature: \"on\"}\n")
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: %s}\nspec:\n  version: 2.0.0\n", o.name)
	if o.autoRollback != nil {
		fmt.Fprintf(&b, "  autoRollback: %v\n", *o.autoRollback)
	}
	b.WriteString("  stages:\n  - name: config\n    steps:\n    - name: settings\n      manifests: {path: settings.yaml}\n")
	b.WriteString("  - name: workloads\n    steps:\n")
	fmt.Fprintf(&b, "    - name: web\n      image: {kind: Deployment, namespace: shop, name: web, images: {app: example.com/shop/web:%s}}\n", o.webTag)
	if o.webTimeout != "" {
		fmt.Fprintf(&b, "      timeout: %s\n", o.webTimeout)
	}
	fmt.Fprintf(&b, "    - name: agent\n      image: {kind: DaemonSet, namespace: shop, name: agent, images: {agent: example.com/shop/agent:%s}}\n", o.agentTag)
	b.WriteString("    gates:\n    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\n")
	if o.httpGate != "" {
		fmt.Fprintf(&b, "    - http: {url: %q, expectStatus: 200, interval: 200ms}\n", o.httpGate)
		if o.gateTimeout != "" {
			fmt.Fprintf(&b, "      timeout: %s\n", o.gateTimeout)
		}
	}
	path := filepath.Join(dir, "plan.yaml")
	write(w.t, path, b.String())
	return path
}

// capture is the test's own record of the platform's objects.
type capture struct {
	web      *appsv1.Deployment
	agent    *appsv1.DaemonSet
	settings *corev1.ConfigMap
}

func (w *world) capture() capture {
	w.t.Helper()
	web, err := w.cs.AppsV1().Deployments("shop").Get(w.ctx, "web", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	agent, err := w.cs.AppsV1().DaemonSets("shop").Get(w.ctx, "agent", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	cm, err := w.cs.CoreV1().ConfigMaps("shop").Get(w.ctx, "settings", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return capture{web: web, agent: agent, settings: cm}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
