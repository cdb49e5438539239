package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// TestHelmStageRolledBackAfterACrashBeforeItsBackupWasSaved: a Helm step
// starts while the save of its stage's backup is in flight, as a step of
// any kind does, because the release's starting revision is kept in the
// backup itself, not in the record alone. Killed right after the
// release's upgrade wrote, before that save landed, the run is rolled
// back: the rollback finds the backup in the cluster, with the revision,
// and returns the release to it.
func TestHelmStageRolledBackAfterACrashBeforeItsBackupWasSaved(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	before, err := w.helm().Latest(w.ctx, "shop-cache", "shop")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeCacheChart(t, dir, "1.0.0")
	write(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cache-settings, namespace: shop}\ndata: {level: \"2\"}\n")
	plan := filepath.Join(dir, "plan.yaml")
	write(t, plan, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: cache-2.0.7}
spec:
  version: 2.0.7
  autoRollback: false
  stages:
  - name: config
    steps: [{name: settings, manifests: {path: settings.yaml}}]
  - name: addons
    steps: [{name: cache, helm: {release: shop-cache, namespace: shop, chart: cache-1.0.0, values: {tag: "2.0.7"}}}]
`)
	env := []string{runner.KillAfterStepWriteEnv + "=cache", runner.SlowSavesEnv + "=2s"}
	if killed := w.upshift(env, append([]string{"apply", "-f", plan}, fastLease...)...); killed.code != -9 {
		t.Fatalf("want SIGKILL after the release's first write, got %s", killed)
	}
	if st := w.run("cache-2.0.7").Status.Stages[1]; st.Backup != nil {
		t.Fatalf("at the kill the addons stage has backup %v recorded: want none (its save was to be in flight)", st.Backup)
	}
	if rel, err := w.helm().Latest(w.ctx, "shop-cache", "shop"); err != nil || rel.Revision == before.Revision {
		t.Fatalf("release shop-cache at the kill: revision %d (%v); want the upgrade's, after %d", rel.Revision, err, before.Revision)
	}

	out := w.mustExit(0, nil, "rollback", "cache-2.0.7")
	if !strings.Contains(out.stdout+out.stderr, "taken before the run stopped") {
		t.Errorf("the rollback does not say it found the addons stage's backup:\n%s", out)
	}
	w.waitImages("app=cache", "cache", "example.com/shop/cache:1.0.0")
	rel, err := w.helm().Latest(w.ctx, "shop-cache", "shop")
	if err != nil || string(rel.Status) != "deployed" || rel.Values["tag"] == "2.0.7" {
		t.Fatalf("release shop-cache after the rollback: %s with values %v (%v); want deployed as before the run", rel.Status, rel.Values, err)
	}
}

// TestRollbackOfARunKilledBeforeItsFirstSave: the run's first save (its
// status) is held back, and the process is killed after the first
// stage's step wrote: the record holds a run that never started.
// `upshift rollback` finds the first stage's backup before it decides what
// to restore, and puts the ConfigMap back, instead of saying "rolled back"
// with nothing restored.
func TestRollbackOfARunKilledBeforeItsFirstSave(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	dir := t.TempDir()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first-settings", Namespace: "shop"}, Data: map[string]string{"level": "1"}}
	if _, err := w.cs.CoreV1().ConfigMaps("shop").Create(w.ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	level := func() string {
		got, err := w.cs.CoreV1().ConfigMaps("shop").Get(w.ctx, "first-settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Data["level"]
	}
	write(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first-settings, namespace: shop}\ndata: {level: \"2\"}\n")
	plan := filepath.Join(dir, "plan.yaml")
	write(t, plan, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: first-2}
spec:
  version: "2"
  stages:
  - name: config
    steps: [{name: first-settings, manifests: {path: settings.yaml}}]
  - name: more
    steps: [{name: more-settings, manifests: {path: settings.yaml}}]
`)
	env := []string{runner.KillAfterStepWriteEnv + "=first-settings", runner.SlowSavesEnv + "=2s"}
	if killed := w.upshift(env, append([]string{"apply", "-f", plan}, fastLease...)...); killed.code != -9 {
		t.Fatalf("want SIGKILL after the first step's write, got %s", killed)
	}
	if r := w.run("first-2"); r.Status.Attempt != 0 {
		t.Fatalf("at the kill the run is at attempt %d: want 0, its first save held back", r.Status.Attempt)
	}
	if got := level(); got != "2" {
		t.Fatalf("at the kill the ConfigMap's level is %q: the step was to have written 2", got)
	}
	out := w.mustExit(0, nil, "rollback", "first-2")
	if !strings.Contains(out.stdout+out.stderr, "taken before the run stopped") {
		t.Errorf("the rollback does not say it found the first stage's backup:\n%s", out)
	}
	if got := level(); got != "1" {
		t.Fatalf("after the rollback the ConfigMap's level is %q, want 1 as before the run", got)
	}
}
