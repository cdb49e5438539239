package engine_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// TestInterruptSavesAndResumes: SIGTERM stops `apply` (exit 4) with the
// run saved as it stood and the lease released, so the next `apply`
// resumes at once and reaches the target.
func TestInterruptSavesAndResumes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{PodReadyDelay: 3 * time.Second})
	w.installPlatform()
	plan := w.upgradePlan(planOptions{})
	apply := w.startUpshift("apply", "-f", plan)
	w.waitStageRunning("shop-2.0.0", "workloads", apply)

	if err := apply.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := apply.wait(t, 5*time.Second); code != 4 {
		t.Fatalf("after SIGTERM: want exit 4, got %d\n%s", code, apply.out)
	}
	mustContain(t, "interrupted apply output", apply.out.String(), "interrupted", "upshift apply -f", "resume")
	// The record says what happened; status says which command resumes.
	st := w.mustExit(0, nil, "status", "shop-2.0.0")
	mustContain(t, "status of the interrupted run", st.stdout, "interrupted",
		"next: not driven by any process: `upshift apply -f` with the same plan resumes it")

	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunRunning || !strings.Contains(run.Status.Message, "interrupted") {
		t.Errorf("after SIGTERM the run is %s (%q), want Running with a message saying it was interrupted", run.Status.Phase, run.Status.Message)
	}
	l, err := w.cs.CoordinationV1().Leases(runner.DefaultNamespace).Get(w.ctx, "upshift", metaGet)
	if err != nil {
		t.Fatalf("read the lease: %v", err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the interrupted apply did not release the lease: holder %q", *h)
	}

	// A released lease lets the next apply start driving at once; a lease
	// left behind would make it wait up to a lease duration.
	started := time.Now()
	again := w.mustExit(0, nil, "apply", "-f", plan)
	if strings.Contains(again.stdout+again.stderr, "lease held by") {
		t.Errorf("the resumed apply waited for a lease:\n%s", again)
	}
	first, err := firstLineTime(again.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, again)
	}
	t.Logf("the resumed apply printed its first line %s after it started", first.Sub(started).Round(time.Millisecond))
	if d := first.Sub(started); d > 2*time.Second {
		t.Errorf("the resumed apply printed its first line %s after it started, want under 2s\n%s", d, again)
	}
	mustContain(t, "resumed apply", again.stdout, "resuming run shop-2.0.0")
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunSucceeded {
		t.Fatalf("the resumed run ended %s", ph)
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
	w.waitImages("app=agent", "agent", "example.com/shop/agent:2.0.0")
}

// firstLineTime is the timestamp of the first plain progress line.
func firstLineTime(out string) (time.Time, error) {
	line, _, _ := strings.Cut(out, "\n")
	stamp, _, _ := strings.Cut(line, " ")
	ts, err := time.Parse("2006-01-02T15:04:05.000Z", stamp)
	if err != nil {
		return time.Time{}, errors.New("the output does not start with a timestamped line: " + err.Error())
	}
	return ts, nil
}
