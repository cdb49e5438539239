package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// writeCacheChart writes the test's add-on chart, shop-cache, at version
// v: a Deployment (image tag from values) and a ConfigMap; 2.x adds a
// second ConfigMap.
func writeCacheChart(t *testing.T, dir, v string) string {
	t.Helper()
	c := filepath.Join(dir, "cache-"+v)
	if err := os.MkdirAll(filepath.Join(c, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(c, "Chart.yaml"), fmt.Sprintf("apiVersion: v2\nname: shop-cache\nversion: %s\nappVersion: %q\n", v, v))
	write(t, filepath.Join(c, "values.yaml"), "tag: \"\"\nsize: 64Mi\n")
	write(t, filepath.Join(c, "templates", "deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}, labels: {app: cache}}
spec:
  replicas: 1
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers:
      - name: cache
        image: "example.com/shop/cache:{{ .Values.tag | default .Chart.AppVersion }}"
        args: ["--size={{ .Values.size }}"]
`)
	write(t, filepath.Join(c, "templates", "config.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-config}\ndata: {size: {{ .Values.size | quote }}}\n")
	if v[0] == '2' {
		write(t, filepath.Join(c, "templates", "extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-extra}\ndata: {since: \"2\"}\n")
	}
	return c
}

// helmPlan writes a plan: stage schema (a migration Job with its
// down-migration), stage addons (the cache chart at chartVersion with
// values file size=128Mi and inline tag), stage workloads (web at webTag).
func (w *world) helmPlan(name, chartVersion, cacheTag, webTag string) string {
	dir := w.t.TempDir()
	writeCacheChart(w.t, dir, chartVersion)
	write(w.t, filepath.Join(dir, "up.yaml"), jobManifest("migrate-2-0-0", "2.0.0"))
	write(w.t, filepath.Join(dir, "down.yaml"), jobManifest("migrate-2-0-0-down", "2.0.0"))
	write(w.t, filepath.Join(dir, "cache-values.yaml"), "size: 128Mi\n")
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: %s}
spec:
  version: 2.0.0
  stages:
  - name: schema
    steps:
    - name: migrate
      job: {path: up.yaml, rollbackJob: {path: down.yaml}}
  - name: addons
    steps:
    - name: cache
      timeout: 1m
      helm: {release: shop-cache, namespace: shop, chart: cache-%s, valuesFiles: [cache-values.yaml], values: {tag: %q}}
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:%s"}}
`, name, chartVersion, cacheTag, webTag))
	return filepath.Join(dir, "plan.yaml")
}

// installCache installs the cache chart 1.0.0 with upshift itself.
func (w *world) installCache() {
	w.t.Helper()
	dir := w.t.TempDir()
	writeCacheChart(w.t, dir, "1.0.0")
	write(w.t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-cache-1.0.0}
spec:
  version: 1.0.0
  stages:
  - name: addons
    steps:
    - name: cache
      helm: {release: shop-cache, namespace: shop, chart: cache-1.0.0}
`)
	w.mustExit(0, nil, "apply", "-f", filepath.Join(dir, "plan.yaml"))
}

func (w *world) helm() *helmx.Client {
	w.t.Helper()
	hc, err := helmx.New(w.c.RESTConfig())
	if err != nil {
		w.t.Fatal(err)
	}
	return hc
}

// cacheState is the test's capture of the add-on's objects.
type cacheState struct {
	deployment any
	config     map[string]string
}

func (w *world) cacheState() cacheState {
	w.t.Helper()
	d, err := w.cs.AppsV1().Deployments("shop").Get(w.ctx, "shop-cache", metaGet)
	if err != nil {
		w.t.Fatal(err)
	}
	cm, err := w.cs.CoreV1().ConfigMaps("shop").Get(w.ctx, "shop-cache-config", metaGet)
	if err != nil {
		w.t.Fatal(err)
	}
	return cacheState{deployment: d.Spec, config: cm.Data}
}

// TestHelmAndMigrationRollBack: the migration ran, the add-on was
// upgraded (new revision, a new ConfigMap), then web fails: the rollback
// returns the release to the revision the stage recorded, runs the
// down-migration, and every object equals the test's capture.
func TestHelmAndMigrationRollBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	before, cacheBefore := w.capture(), w.cacheState()
	hist, err := w.helm().History(w.ctx, "shop-cache", "shop")
	if err != nil || len(hist) != 1 {
		t.Fatalf("history after install = %v, %v; want revision 1", hist, err)
	}

	r := w.mustExit(2, nil, "apply", "-f", w.helmPlan("shop-2.0.0", "2.0.0", "2.0.0", "2.0.0-broken"))
	mustContain(t, "apply stderr", r.stderr, "step web failed", "rolled back")
	run := w.run("shop-2.0.0")
	if got := run.Status.Stages[1].Backup.HelmReleases; len(got) != 1 || got[0].Revision != 1 {
		t.Errorf("recorded revisions = %+v, want shop/shop-cache at 1", got)
	}
	mustContain(t, "addon step message", run.Status.Stages[1].Steps[0].Message, "from revision 1 to 2")

	st, err := w.helm().Status(w.ctx, "shop-cache", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != helmx.StatusDeployed || st.ChartVersion != "1.0.0" || st.Revision < 3 {
		t.Errorf("release after rollback: %+v; want chart 1.0.0 deployed in a new revision", st)
	}
	if _, err := w.cs.CoreV1().ConfigMaps("shop").Get(w.ctx, "shop-cache-extra", metaGet); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap chart 2.0.0 added is still there: %v", err)
	}
	if after := w.cacheState(); !reflect.DeepEqual(after, cacheBefore) {
		t.Errorf("cache differs from the capture:\nbefore %+v\nafter  %+v", cacheBefore, after)
	}
	down, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, "migrate-2-0-0-down", metaGet)
	if err != nil || down.Status.Succeeded != 1 {
		t.Errorf("the down-migration did not run: %v", err)
	}
	w.assertRestored(before)
	w.waitImages("app=cache", "cache", "example.com/shop/cache:1.0.0")

	// The same upgrade with a good web reaches the target: values file
	// and inline values both apply.
	w.mustExit(0, nil, "apply", "-f", w.helmPlan("shop-2.0.1", "2.0.0", "2.0.1", "2.0.0"))
	if st := w.cacheState(); st.config["size"] != "128Mi" {
		t.Errorf("cache config = %v, want size 128Mi from the values file", st.config)
	}
	w.waitImages("app=cache", "cache", "example.com/shop/cache:2.0.1")
}

// TestHelmUpgradeToABrokenImage: the add-on's new image crash-loops; the
// step fails fast naming the pod, the release goes back to revision 1,
// and the run rolls back.
func TestHelmUpgradeToABrokenImage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	cacheBefore := w.cacheState()

	r := w.mustExit(2, nil, "apply", "-f", w.helmPlan("shop-2.0.0", "2.0.0", "2.0.0-broken", "2.0.0"))
	mustContain(t, "apply stderr", r.stderr, "step cache failed", "CrashLoopBackOff", "rolled back")
	st, err := w.helm().Status(w.ctx, "shop-cache", "shop")
	if err != nil || st.ChartVersion != "1.0.0" || st.Status != helmx.StatusDeployed {
		t.Errorf("release after the failed upgrade: %+v, %v; want chart 1.0.0 deployed", st, err)
	}
	if after := w.cacheState(); !reflect.DeepEqual(after, cacheBefore) {
		t.Errorf("cache differs from the capture:\nbefore %+v\nafter  %+v", cacheBefore, after)
	}
	w.waitImages("app=cache", "cache", "example.com/shop/cache:1.0.0")
}
