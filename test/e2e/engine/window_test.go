package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// windowPlan upgrades web in one stage, inside the windows given (YAML).
func (w *world) windowPlan(windows string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  windows: `+windows+`
  stages:
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
`)
	return filepath.Join(dir, "plan.yaml")
}

// A plan outside its windows starts no stage: apply stops (exit 4)
// saying when the next window opens, nothing changed; in a window (the
// windows are edited, which is no change of the plan's content) the same
// run goes on. Bad windows are refused by field before anything starts.
func TestWindowsHoldAStage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()

	// New Year's Day at midnight in Tokyo, for an hour: closed on any
	// other day this test runs.
	out := w.mustExit(4, nil, "apply", "-f", w.windowPlan(`[{schedule: "0 0 1 1 *", duration: 1h, timeZone: Asia/Tokyo}]`))
	mustContain(t, "apply outside the window", out.stdout+out.stderr, "stage workloads needs an open window", "the next window opens at", "-12-31T15:00:00Z", "goes on in the window")
	// The run is recorded (a later apply goes on with it); no stage of it
	// began, so it holds no transition yet.
	if run := w.run("shop-2.0.0"); run.Status.Transitions != 0 || len(run.Status.Stages) > 0 && run.Status.Stages[0].StartedAt != nil {
		t.Fatalf("outside the window: %d transitions, stages %+v", run.Status.Transitions, run.Status.Stages)
	}
	w.assertRestored(before) // nothing changed

	bad := w.mustExit(1, nil, "apply", "-f", w.windowPlan(`[{schedule: "every day", duration: 1h, timeZone: Mars/Olympus}]`))
	mustContain(t, "bad windows", bad.stderr, "spec.windows[0].schedule", "spec.windows[0].timeZone")

	w.mustExit(0, nil, "apply", "-f", w.windowPlan(`[{schedule: "* * * * *", duration: 2m}]`))
	if run := w.run("shop-2.0.0"); run.Status.Phase != v1alpha1.RunSucceeded || run.Status.Attempt != 1 {
		t.Errorf("in the window: run %s, attempt %d; want the same run Succeeded", run.Status.Phase, run.Status.Attempt)
	}
}
