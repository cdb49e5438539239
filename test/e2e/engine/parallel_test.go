package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// graphPlan: settings first, then web and agent side by side.
func (w *world) graphPlan(webTag string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\"}\n")
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: all
    steps:
    - name: settings
      manifests: {path: settings.yaml}
    - name: web
      dependsOn: [settings]
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:%s"}}
    - name: agent
      dependsOn: [settings]
      image: {kind: DaemonSet, namespace: shop, name: agent, images: {agent: "example.com/shop/agent:2.0.0"}}
`, webTag))
	return filepath.Join(dir, "plan.yaml")
}

// TestParallelStepsOverlap: web and agent run side by side: each one's
// write lands while the other is still running, in the audit log.
func TestParallelStepsOverlap(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{PodReadyDelay: 2 * time.Second})
	w.installPlatform()
	w.mustExit(0, nil, "apply", "-f", w.graphPlan("2.0.0"))
	run := w.run("shop-2.0.0")
	steps := run.Status.Stages[0].Steps
	web, agent := steps[1], steps[2]
	var webPatch, agentPatch time.Time
	for _, e := range w.upshiftWrites() {
		switch e.Object() {
		case "deployments shop/web":
			webPatch = e.RequestReceivedTimestamp
		case "daemonsets shop/agent":
			agentPatch = e.RequestReceivedTimestamp
		}
	}
	if webPatch.IsZero() || agentPatch.IsZero() {
		t.Fatalf("audit log lacks the patches: web %v agent %v", webPatch, agentPatch)
	}
	within := func(ts time.Time, s v1alpha1.StepStatus) bool {
		return !ts.Before(s.StartedAt.Time.Add(-50*time.Millisecond)) && !ts.After(s.FinishedAt.Time)
	}
	if !within(agentPatch, web) || !within(webPatch, agent) {
		t.Errorf("the steps did not overlap: web %s..%s patched %s; agent %s..%s patched %s",
			web.StartedAt.Format(time.StampMicro), web.FinishedAt.Format(time.StampMicro), webPatch.Format(time.StampMicro),
			agent.StartedAt.Format(time.StampMicro), agent.FinishedAt.Format(time.StampMicro), agentPatch.Format(time.StampMicro))
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
	w.waitImages("app=agent", "agent", "example.com/shop/agent:2.0.0")
}

// TestFailingBranchCancelsItsSibling: web crash-loops while agent still
// rolls out slowly: agent is cancelled, and the rollback restores both.
func TestFailingBranchCancelsItsSibling(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{PodReadyDelay: 3 * time.Second})
	w.installPlatform()
	before := w.capture()
	r := w.mustExit(2, nil, "apply", "-f", w.graphPlan("2.0.0-broken"))
	mustContain(t, "apply stderr", r.stderr, "step web failed", "rolled back")
	steps := w.run("shop-2.0.0").Status.Stages[0].Steps
	if steps[2].Phase != v1alpha1.PhaseFailed || steps[2].Message != "cancelled: another step of the stage failed" {
		t.Errorf("agent: %s %q, want cancelled", steps[2].Phase, steps[2].Message)
	}
	w.assertRestored(before)
}
