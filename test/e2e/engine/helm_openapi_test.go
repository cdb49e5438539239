package engine_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// A Helm upgrade, stopped at an approval and resumed, never downloads the
// cluster's OpenAPI documents: Helm's schema check validates nothing on an
// API server that validates each write itself, and preflight and the step
// skip it (each process used to download them, about 0.1 s, on every
// start). The upgrade still reaches its chart.
func TestHelmUpgradeDownloadsNoOpenAPIDocuments(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	dir := t.TempDir()
	writeCacheChart(t, dir, "2.0.0")
	plan := filepath.Join(dir, "plan.yaml")
	write(t, plan, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: addons
    steps:
    - name: cache
      helm: {release: shop-cache, namespace: shop, chart: cache-2.0.0}
  - name: approve-workloads
    steps:
    - name: approve
      approval: {message: "the cache is on 2.0.0: approve the workloads"}
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
`)

	first := time.Now()
	w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
	w.mustExit(0, nil, "approve", "shop-2.0.0")
	resumed := time.Now()
	w.mustExit(0, nil, "apply", "-f", plan)

	if n := w.schemaReads(first, resumed); n > 0 {
		t.Errorf("the first apply read the OpenAPI documents %d time(s)", n)
	}
	if n := w.schemaReads(resumed, time.Now()); n > 0 {
		t.Errorf("the resumed apply read the OpenAPI documents %d time(s)", n)
	}
	st, err := w.helm().Status(w.ctx, "shop-cache", "shop")
	if err != nil || st.ChartVersion != "2.0.0" || st.Status != helmx.StatusDeployed {
		t.Errorf("release after the run: %+v, %v; want chart 2.0.0 deployed", st, err)
	}
}

// schemaReads counts upshift's requests for the cluster's OpenAPI v3
// schemas received in [from, to).
func (w *world) schemaReads(from, to time.Time) int {
	w.t.Helper()
	time.Sleep(time.Second) // let the audit log's last batch land
	events, err := w.c.ReadAudit()
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, e := range localcluster.ByUser(events, upshiftUser) {
		at := e.RequestReceivedTimestamp
		if strings.HasPrefix(e.RequestURI, "/openapi/v3") && !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}
