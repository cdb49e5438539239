package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// recreatePlan: stage recreate deletes web (matched by a namespace
// pattern) and applies it again with a new selector, which no update
// could change; stage workloads then upgrades agent (broken when agentTag
// says so).
func (w *world) recreatePlan(name, agentTag string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "web.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web, tier: front}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      containers:
      - {name: app, image: example.com/shop/web:2.0.0}
`)
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: %s}
spec:
  version: 2.0.0
  stages:
  - name: recreate
    steps:
    - name: web
      recreate: {apiVersion: apps/v1, kind: Deployment, namespace: "sho*", selector: app=web, from: {path: web.yaml}}
  - name: workloads
    steps:
    - name: agent
      image: {kind: DaemonSet, namespace: shop, name: agent, images: {agent: "example.com/shop/agent:%s"}}
`, name, agentTag))
	return filepath.Join(dir, "plan.yaml")
}

// TestRecreateRollsBackAnImmutableChange: the stage re-creates web with a
// new selector; the next stage fails; the rollback re-creates web once
// more from its backup, and every object equals the test's capture.
func TestRecreateRollsBackAnImmutableChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()

	r := w.mustExit(2, nil, "apply", "-f", w.recreatePlan("shop-2.0.0", "2.0.0-broken"))
	mustContain(t, "apply stderr", r.stderr, "step agent failed", "rolled back")
	run := w.run("shop-2.0.0")
	if msg := run.Status.Stages[0].Steps[0].Message; msg != "re-created deployments matching app=web in shop (1 from manifests), all Current" {
		t.Errorf("recreate step message = %q", msg)
	}
	after := w.capture()
	if after.web.UID == before.web.UID {
		t.Errorf("web was never re-created (same UID)")
	}
	w.assertRestored(before)

	// The same plan with a good agent goes through: web runs with its new
	// selector.
	w.mustExit(0, nil, "apply", "-f", w.recreatePlan("shop-2.0.1", "2.0.0"))
	web := w.capture().web
	if web.Spec.Selector.MatchLabels["tier"] != "front" {
		t.Errorf("web selector = %v, want tier=front", web.Spec.Selector.MatchLabels)
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
}
