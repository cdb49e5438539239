package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// Values planted in web's env: as secret as an inline token gets. No
// output of Upshift may show them.
const (
	plantedToken = "planted-token-7f3a9c2e51"
	rotatedToken = "rotated-token-55d01b8e4a"
)

// keptNames are the variables the tests' envKept gate keeps: set inline,
// from a fieldRef, by another field manager, and the planted token.
const keptNames = "[MODE, NODE, OUT_OF_BAND, API_TOKEN]"

// plantToken sets API_TOKEN on web as a secrets operator would (its own
// field manager: operator-kubectl's applied set, OUT_OF_BAND, stays).
func (w *world) plantToken() {
	w.t.Helper()
	patch := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"API_TOKEN","value":"` + plantedToken + `"}]}]}}}}`
	force := true
	if _, err := w.cs.AppsV1().Deployments("shop").Patch(w.ctx, "web", types.ApplyPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "secrets-operator", Force: &force}); err != nil {
		w.t.Fatalf("plant the token: %v", err)
	}
}

// envKeptPlan writes a plan whose stage stageName runs step (YAML at the
// step's indentation) and then gates on web's variables.
func (w *world) envKeptPlan(stageName, step string, files map[string]string) string {
	w.t.Helper()
	dir := w.t.TempDir()
	for name, content := range files {
		write(w.t, filepath.Join(dir, name), content)
	}
	plan := fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: %s
    steps:
    - name: change
      %s
    gates:
    - envKept: {kind: Deployment, namespace: shop, name: web, container: app, names: %s}
    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}
`, stageName, step, keptNames)
	write(w.t, filepath.Join(dir, "plan.yaml"), plan)
	return filepath.Join(dir, "plan.yaml")
}

func envOf(d corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range d.Env {
		m[e.Name] = e
	}
	return m
}

// mustNotShow fails if any output shows a planted value.
func mustNotShow(t *testing.T, what, out string) {
	t.Helper()
	for _, v := range []string{plantedToken, rotatedToken} {
		if strings.Contains(out, v) {
			t.Errorf("%s shows the env value %q:\n%s", what, v, out)
		}
	}
}

// TestEnvKeptPassesWhenAnImageStepKeepsEnv: a gate in a stage that does
// not change web is refused before anything changes (exit 1, naming the
// field and the fix); in the stage of web's image step, the gate passes:
// the image step keeps every variable, however it was set.
func TestEnvKeptPassesWhenAnImageStepKeepsEnv(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.plantToken()

	writes := len(w.shopWrites())
	settings := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\"}\n"
	wrong := w.envKeptPlan("config", "manifests: {path: settings.yaml}", map[string]string{"settings.yaml": settings})
	r := w.mustExit(1, nil, "apply", "-f", wrong)
	mustContain(t, "refusal", r.stderr, `spec.stages[0].gates[0].envKept: Invalid value: "deployment shop/web": no step of stage "config" changes it`,
		"put the envKept gate in the stage that changes the workload")
	if n := len(w.shopWrites()); n != writes {
		t.Errorf("a refused plan wrote to the platform: %d writes before, %d after", writes, n)
	}

	plan := w.envKeptPlan("workloads", "image: {kind: Deployment, namespace: shop, name: web, images: {app: example.com/shop/web:2.0.0}}", nil)
	pv := w.mustExit(0, nil, "plan", "-f", plan)
	mustContain(t, "plan", pv.stdout, "? gate envKept deployment shop/web container app: MODE, NODE, OUT_OF_BAND, API_TOKEN")
	r = w.mustExit(0, nil, "apply", "-f", plan)
	mustContain(t, "apply output", r.stdout, "reached version 2.0.0")
	g := w.run("shop-2.0.0").Status.Stages[0].Gates[0]
	if g.Phase != v1alpha1.PhaseSucceeded || g.Message != "deployment shop/web container app keeps 4 variables as before the stage" {
		t.Errorf("envKept gate: %s %q", g.Phase, g.Message)
	}
	env := envOf(w.capture().web.Spec.Template.Spec.Containers[0])
	if env["API_TOKEN"].Value != plantedToken || env["MODE"].Value != "prod" || env["OUT_OF_BAND"].Value != "kept" || env["NODE"].ValueFrom == nil {
		t.Errorf("web's env after the image step: %+v", env)
	}
	mustNotShow(t, "apply output", r.stdout+r.stderr)
}

// TestEnvKeptFailsAndRollsBack: a manifests step that drops MODE and
// rotates the planted token fails the gate, which names both variables
// and neither value; the stage rolls back (exit 2, restore verified) and
// web has its variables again. No output of the run shows a value.
func TestEnvKeptFailsAndRollsBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.plantToken()
	before := w.capture()

	web := `apiVersion: apps/v1
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
        image: example.com/shop/web:2.0.0
        env:
        - name: NODE
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - {name: API_TOKEN, value: ` + rotatedToken + `}
`
	plan := w.envKeptPlan("workloads", "manifests: {path: web.yaml}", map[string]string{"web.yaml": web})
	r := w.mustExit(2, nil, "apply", "-f", plan)
	const failure = "deployment shop/web container app: 2 variables not kept: API_TOKEN value changed; MODE removed (was a value)"
	mustContain(t, "apply stderr", r.stderr, "rolled back", "restore verified", failure)
	mustNotShow(t, "apply output", r.stdout+r.stderr)

	run := w.run("shop-2.0.0")
	st := run.Status.Stages[0]
	if run.Status.Phase != v1alpha1.RunRolledBack || st.Phase != v1alpha1.PhaseRolledBack {
		t.Fatalf("run %s, stage %s; want RolledBack", run.Status.Phase, st.Phase)
	}
	if g := st.Gates[0]; g.Phase != v1alpha1.PhaseFailed || g.Message != failure {
		t.Errorf("envKept gate: %s %q\nwant Failed %q", g.Phase, g.Message, failure)
	}
	if st.Rollback == nil || len(st.Rollback.Differences) > 0 {
		t.Errorf("rollback: %+v, want verified with no difference", st.Rollback)
	}
	w.assertRestored(before)
	env := envOf(w.capture().web.Spec.Template.Spec.Containers[0])
	if env["API_TOKEN"].Value != plantedToken || env["MODE"].Value != "prod" || env["OUT_OF_BAND"].Value != "kept" {
		t.Errorf("web's env after the rollback: %+v", env)
	}
	for _, args := range [][]string{{"status", "shop-2.0.0"}, {"status", "shop-2.0.0", "-o", "yaml"}} {
		out := w.mustExit(0, nil, args...)
		mustNotShow(t, strings.Join(args, " "), out.stdout+out.stderr)
	}
}
