package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// waitPlan: config, then a stage with one waiting step (approval or
// pause), then web's image.
func (w *world) waitPlan(waitStep string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\"}\n")
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: config
    steps:
    - name: settings
      manifests: {path: settings.yaml}
  - name: hold
    steps:
    - name: wait
      %s
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
`, waitStep))
	return filepath.Join(dir, "plan.yaml")
}

// TestApprovalWaitsForAnOperator: --no-wait stops at the approval (exit 4)
// with the command to run; a waiting apply goes on as soon as an operator
// approves.
func TestApprovalWaitsForAnOperator(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	plan := w.waitPlan(`approval: {message: "check the dashboards first"}`)
	r := w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
	mustContain(t, "apply --no-wait", r.stderr, "upshift approve shop-2.0.0")
	if st := w.run("shop-2.0.0").Status.Stages[1].Steps[0]; st.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("approval step is %s, want Running (waiting)", st.Phase)
	}
	if img := w.capture().web.Spec.Template.Spec.Containers[0].Image; img != "example.com/shop/web:1.0.0" {
		t.Fatalf("web changed before the approval: %s", img)
	}

	bg := w.startUpshift("apply", "-f", plan, "--wait")
	time.Sleep(2 * time.Second) // it is waiting now
	if bg.exited() {
		t.Fatalf("apply --wait did not wait:\n%s", bg.out)
	}
	approvedAt := time.Now()
	a := w.mustExit(0, nil, "approve", "shop-2.0.0")
	mustContain(t, "approve", a.stdout, "approved step wait of run shop-2.0.0")
	if code := bg.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("the waiting apply ended %d:\n%s", code, bg.out)
	}
	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("run %s", run.Status.Phase)
	}
	st := run.Status.Stages[1].Steps[0]
	t.Logf("approval seen %s after the approve command", st.FinishedAt.Sub(approvedAt).Round(time.Millisecond))
	mustContain(t, "approval step message", st.Message, "approved by")
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
	w.mustExit(1, nil, "approve", "shop-2.0.0") // nothing waits any more
}

// TestPauseResumesWhereItWas: a pause's deadline is saved; a resumed run
// does not start the pause over.
func TestPauseResumesWhereItWas(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	plan := w.waitPlan(`pause: {duration: 6s}`)
	r := w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
	mustContain(t, "apply --no-wait", r.stderr, "paused until")
	time.Sleep(4 * time.Second)
	start := time.Now()
	w.mustExit(0, nil, "apply", "-f", plan, "--wait")
	// Started over, the pause alone would take 6 s; going on, about 2 s
	// are left, and the rest is the apply's own time, which a machine
	// busy with other test clusters stretched past 3 s.
	if took := time.Since(start); took >= 6*time.Second {
		t.Errorf("the resumed pause took %s: it started over instead of going on from its saved start", took)
	}
	st := w.run("shop-2.0.0").Status.Stages[1].Steps[0]
	if d := st.FinishedAt.Sub(st.StartedAt.Time); d < 6*time.Second {
		t.Errorf("the pause lasted %s, want at least 6s", d)
	}
}

// twoApprovalsPlan: config, approval first, web's image, approval second.
func (w *world) twoApprovalsPlan() string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\"}\n")
	write(w.t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: config
    steps:
    - name: settings
      manifests: {path: settings.yaml}
  - name: hold-1
    steps:
    - name: first
      approval: {}
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
  - name: hold-2
    steps:
    - name: second
      approval: {message: "check the dashboards"}
`)
	return filepath.Join(dir, "plan.yaml")
}

// TestApproveOnlyTheWaitingStep: `upshift approve NAME` approves the step
// the run waits at and nothing further on: while the run is in its first
// stage it refuses (exit 1, changing nothing), naming the approval steps
// and how to approve one ahead; --step approves a later one explicitly,
// and the run does not stop there. Status says which command to run.
func TestApproveOnlyTheWaitingStep(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	plan := w.twoApprovalsPlan()

	// The run stands in its first stage (killed once the config step
	// began: the next save already holds the next stage's backup).
	w.upshift([]string{runner.KillAfterTransitionEnv + "=3"}, append([]string{"apply", "-f", plan}, fastLease...)...)
	if st := w.run("shop-2.0.0").Status.Stages[1].Phase; st != v1alpha1.PhasePending {
		t.Fatalf("stage hold-1 is %s, want Pending", st)
	}
	r := w.mustExit(1, nil, "approve", "shop-2.0.0")
	mustContain(t, "approve while no step waits", r.stderr,
		"run shop-2.0.0 waits at no approval step",
		"first in stage hold-1: Pending; second in stage hold-2: Pending",
		"upshift approve shop-2.0.0 --step STEP, with STEP one of first, second")
	if a := w.run("shop-2.0.0").Status.Approvals; len(a) != 0 {
		t.Fatalf("a refused approve recorded approvals: %+v", a)
	}

	// A later step, named: approved ahead, said so.
	r = w.mustExit(0, nil, "approve", "shop-2.0.0", "--step", "second")
	mustContain(t, "approve --step second", r.stdout, "pre-approved step second of run shop-2.0.0; the run will not stop there")

	// The run goes on and stops at first, which nobody approved.
	r = w.mustExit(4, nil, append([]string{"apply", "-f", plan, "--no-wait"}, fastLease...)...)
	mustContain(t, "apply --no-wait", r.stderr, "upshift approve shop-2.0.0")
	st := w.mustExit(0, nil, "status", "shop-2.0.0")
	mustContain(t, "status while waiting", st.stdout,
		"step first", "waiting for approval: upshift approve shop-2.0.0",
		"next: waiting for approval of step first: `upshift approve shop-2.0.0`")

	r = w.mustExit(0, nil, "approve", "shop-2.0.0")
	mustContain(t, "approve", r.stdout, "approved step first of run shop-2.0.0")
	r = w.mustExit(1, nil, "approve", "shop-2.0.0")
	mustContain(t, "approve again", r.stderr, "step first of run shop-2.0.0 is already approved (by ")

	// Both approved: the run reaches its target without stopping again.
	w.mustExit(0, nil, append([]string{"apply", "-f", plan, "--no-wait"}, fastLease...)...)
	run := w.run("shop-2.0.0")
	if msg := run.Status.Stages[3].Steps[0].Message; !strings.HasPrefix(msg, "approved by ") {
		t.Errorf("step second: %q, want approved by an operator", msg)
	}
	r = w.mustExit(1, nil, "approve", "shop-2.0.0", "--step", "first")
	mustContain(t, "approve after the end", r.stderr, "run shop-2.0.0 is Succeeded: no approval step of it will run")
}
