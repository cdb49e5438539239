package engine_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// soakPlan upgrades web, then soaks its readiness for a while.
func (w *world) soakPlan(duration string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
    gates:
    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}
    - soak: {duration: `+duration+`, interval: 1s}
`)
	return filepath.Join(dir, "plan.yaml")
}

// TestSoakPassesWithoutRegression: the soak lasts its duration and passes.
func TestSoakPassesWithoutRegression(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.mustExit(0, nil, "apply", "-f", w.soakPlan("4s"))
	g := w.run("shop-2.0.0").Status.Stages[0].Gates[1]
	if d := g.FinishedAt.Sub(g.StartedAt.Time); d < 4*time.Second {
		t.Errorf("the soak lasted %s, want at least 4s", d)
	}
	mustContain(t, "soak message", g.Message, "no regression")
}

// TestSoakCatchesARegression: web breaks during the soak (someone else
// sets a crash-looping image); the stage fails and rolls back.
func TestSoakCatchesARegression(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	bg := w.startUpshift("apply", "-f", w.soakPlan("60s"))
	w.eventually("the soak has started", func() (bool, string) {
		r := w.upshift(nil, "status", "shop-2.0.0", "-o", "json")
		return r.code == 0 && contains(r.stdout, "soaking until"), r.stdout
	})
	patch := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"example.com/shop/web:2.0.0-broken"}]}}}}`
	force := true
	if _, err := w.cs.AppsV1().Deployments("shop").Patch(w.ctx, "web", types.ApplyPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "someone-else", Force: &force}); err != nil {
		t.Fatal(err)
	}
	if code := bg.wait(t, 60*time.Second); code != 2 {
		t.Fatalf("apply ended %d, want 2 (rolled back):\n%s", code, bg.out)
	}
	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunRolledBack {
		t.Fatalf("run %s", run.Status.Phase)
	}
	mustContain(t, "failure", run.Status.Failure, "gate soak", "regression")
	w.assertRestored(before)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
