package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// everyKindPlan writes plan n: one step of every kind that writes, each
// with content of its own for n.
func (w *world) everyKindPlan(n int) string {
	dir := w.t.TempDir()
	writeCacheChart(w.t, dir, "1.0.0")
	write(w.t, filepath.Join(dir, "crd.yaml"), fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.shop.example.com, labels: {iteration: "%d"}}
spec:
  group: shop.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, n))
	write(w.t, filepath.Join(dir, "settings.yaml"), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"%d\"}\n", n))
	write(w.t, filepath.Join(dir, "job.yaml"), jobManifest(fmt.Sprintf("migrate-%d", n), fmt.Sprintf("2.0.%d", n)))
	write(w.t, filepath.Join(dir, "gw.yaml"), gatewayManifest(fmt.Sprintf("2.0.%d", n)))
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: every-%d}
spec:
  version: 2.0.%d
  stages:
  - name: crds
    steps: [{name: crds, crds: {path: crd.yaml}}]
  - name: config
    steps: [{name: settings, manifests: {path: settings.yaml}}]
  - name: schema
    steps: [{name: migrate, job: {path: job.yaml}}]
  - name: addons
    steps: [{name: cache, helm: {release: shop-cache, namespace: shop, chart: cache-1.0.0, values: {tag: "2.0.%d"}}}]
  - name: workloads
    steps: [{name: web, image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.%d"}}}]
  - name: gateways
    steps: [{name: gw, recreate: {apiVersion: apps/v1, kind: Deployment, namespace: shop, selector: app=gw, from: {path: gw.yaml}}}]
`, n, n, n, n))
	return filepath.Join(dir, "plan.yaml")
}

func gatewayManifest(tag string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: gw, namespace: shop, labels: {app: gw}}
spec:
  replicas: 1
  selector: {matchLabels: {app: gw}}
  template:
    metadata: {labels: {app: gw}}
    spec:
      containers: [{name: gw, image: "example.com/shop/gw:` + tag + `"}]
`
}

// TestCrashBetweenAStepsWriteAndItsSave kills `upshift apply` right after
// the API server answered the first write of a step, before the step's
// completion is saved, for every step kind; `apply` again re-enters the
// step and finishes it, and the result is the one an uninterrupted run
// reaches (the migration Job ran once, the release is deployed with the
// new values, the gateway is back with the new image).
func TestCrashBetweenAStepsWriteAndItsSave(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	const firstStep = "crds" // everyKindPlan's first
	for n, step := range []string{firstStep, "settings", "migrate", "cache", "web", "gw"} {
		t.Run(step, func(t *testing.T) {
			plan := w.everyKindPlan(n)
			env := []string{runner.KillAfterStepWriteEnv + "=" + step}
			if step == firstStep {
				// The run's first save held back: the kill always
				// comes before it lands.
				env = append(env, runner.SlowSavesEnv+"=2s")
			}
			killed := w.upshift(env, append([]string{"apply", "-f", plan}, fastLease...)...)
			if killed.code != -9 {
				t.Fatalf("kill after the first write of step %s: want SIGKILL, got %s", step, killed)
			}
			// A step starts while the save of its Begin (with its
			// stage's backup) is in flight: the kill may come before
			// that save lands (Pending) or after (Running). For the
			// run's first step that save is the run's first, held back
			// here: the run is created and never started (no stages),
			// and the next apply starts it, adopting the backup its
			// first stage took before the step wrote.
			atKill := w.run(fmt.Sprintf("every-%d", n))
			st := stepStatus(atKill, step)
			switch {
			case step == firstStep:
				if st != nil || len(atKill.Status.Stages) != 0 {
					t.Fatalf("at the kill, run %s has stages %+v; want none saved (its first save held back)", atKill.Name, atKill.Status.Stages)
				}
			case st == nil || st.Phase != v1alpha1.PhaseRunning && st.Phase != v1alpha1.PhasePending:
				t.Fatalf("at the kill, step %s is %v; want Running or Pending (its completion not saved)", step, st)
			}
			resumed := w.mustExit(0, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
			if step == firstStep && !strings.Contains(resumed.stdout+resumed.stderr, "taken before the run stopped") {
				t.Fatalf("the resumed run did not adopt the backup its first stage took before the kill:\n%s", resumed)
			}

			tag := fmt.Sprintf("2.0.%d", n)
			w.waitImages("app=web", "app", "example.com/shop/web:"+tag)
			w.waitImages("app=gw", "gw", "example.com/shop/gw:"+tag)
			w.waitImages("app=cache", "cache", "example.com/shop/cache:"+tag)
			cm, err := w.cs.CoreV1().ConfigMaps("shop").Get(w.ctx, "settings", metav1.GetOptions{})
			if err != nil || cm.Data["level"] != fmt.Sprint(n) {
				t.Fatalf("settings level %q, want %d (%v)", cm.Data["level"], n, err)
			}
			crd, err := w.dyn.Resource(crdResource).Get(w.ctx, "gadgets.shop.example.com", metav1.GetOptions{})
			if err != nil || crd.GetLabels()["iteration"] != fmt.Sprint(n) {
				t.Fatalf("CRD iteration %q, want %d (%v)", crd.GetLabels()["iteration"], n, err)
			}
			job := fmt.Sprintf("jobs shop/migrate-%d", n)
			writes := 0
			for _, e := range w.upshiftWrites() {
				if e.Object() == job && (e.Verb == "create" || e.Verb == "patch") {
					writes++
				}
			}
			if writes != 1 {
				t.Fatalf("the migration Job was written %d times; a migration runs once", writes)
			}
			rel, err := w.helm().Latest(w.ctx, "shop-cache", "shop")
			if err != nil || string(rel.Status) != "deployed" || rel.Values["tag"] != tag {
				t.Fatalf("release shop-cache: %+v, %v; want deployed with tag %s", rel.Status, err, tag)
			}
		})
	}
}

func stepStatus(r *v1alpha1.UpgradeRun, name string) *v1alpha1.StepStatus {
	for i := range r.Status.Stages {
		for j := range r.Status.Stages[i].Steps {
			if r.Status.Stages[i].Steps[j].Name == name {
				return &r.Status.Stages[i].Steps[j]
			}
		}
	}
	return nil
}
