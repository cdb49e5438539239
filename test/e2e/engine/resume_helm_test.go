package engine_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// A run resumed after its Helm stage finished does not check that stage's
// chart against the cluster's schemas again (a download of them on every
// resume): the stage will not upgrade its release again. The first apply,
// before the stage ran, did.
func TestResumeDoesNotCheckAFinishedChartAgainstTheSchemas(t *testing.T) {
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

	before, after := w.schemaReads(first, resumed), w.schemaReads(resumed, time.Now())
	if before == 0 {
		t.Fatal("the first apply read no OpenAPI schema: the chart was not checked before its stage ran, and this test proves nothing")
	}
	if after > 0 {
		t.Errorf("the resumed apply read the OpenAPI schemas %d time(s), for a chart whose stage had finished", after)
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
