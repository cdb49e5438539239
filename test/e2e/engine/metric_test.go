package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis/promtest"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// metricPlan upgrades web, then measures the error rate on Prometheus at
// address three times, a second apart.
func (w *world) metricPlan(address string) string {
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
    - metric:
        name: error-rate
        count: 3
        interval: 1s
        successCondition: result[0] < 0.05
        provider:
          prometheus: {address: "`+address+`", query: '`+promtest.Gauge+`'}
`)
	return filepath.Join(dir, "plan.yaml")
}

// A platform stage gated on a real Prometheus: the upgrade stands while
// the error rate holds, and is rolled back, its objects restored, when
// the query breaches.
func TestMetricGateRollsBackWhenTheQueryBreaches(t *testing.T) {
	t.Parallel()
	prom := promtest.Start(t, "0.01")
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()

	prom.Set(t, "0.5")
	w.mustExit(2, nil, "apply", "-f", w.metricPlan(prom.URL))
	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunRolledBack {
		t.Fatalf("run %s, want RolledBack", run.Status.Phase)
	}
	mustContain(t, "failure", run.Status.Failure, "metric error-rate", "failed", "[0.5]")
	w.assertRestored(before)

	prom.Set(t, "0.01")
	w.mustExit(0, nil, "apply", "--retry", "-f", w.metricPlan(prom.URL))
	g := w.run("shop-2.0.0").Status.Stages[0].Gates[1]
	mustContain(t, "the gate's message", g.Message, "metric error-rate", "3 measurements", "[0.01]")
}
