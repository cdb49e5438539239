package engine_test

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// defaultLeaseDuration is `--lease-duration`'s default, which the abort and
// interrupt tests keep so that a lease left behind would show as a wait.
const defaultLeaseDuration = 10 * time.Second

// TestAbortStopsARunAndRollbackStaysPossible: `upshift abort` stops a run
// another process drives (both exit 4), the run is saved as Aborted with
// its backups, and `upshift rollback` then restores everything.
func TestAbortStopsARunAndRollbackStaysPossible(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{PodReadyDelay: 3 * time.Second})
	w.installPlatform()
	before := w.capture()
	plan := w.upgradePlan(planOptions{})
	apply := w.startUpshift("apply", "-f", plan)
	w.waitStageRunning("shop-2.0.0", "workloads", apply)

	abortedAt := time.Now()
	ab := w.mustExit(4, nil, "abort", "shop-2.0.0")
	mustContain(t, "abort stderr", ab.stderr, "aborted", "upshift rollback shop-2.0.0")
	code := apply.wait(t, defaultLeaseDuration+5*time.Second-time.Since(abortedAt))
	if code != 4 {
		t.Fatalf("the aborted apply: want exit 4, got %d\n%s", code, apply.out)
	}
	t.Logf("the driving apply stopped %s after the abort began", time.Since(abortedAt).Round(time.Millisecond))
	mustContain(t, "aborted apply output", apply.out.String(), "aborted")

	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunAborted {
		t.Fatalf("after abort the run is %s, want Aborted (%s)", run.Status.Phase, run.Status.Message)
	}
	// The request was answered: left on the record, it would abort the
	// next resume of this run as soon as that drive polls for requests.
	if run.Status.AbortRequested {
		t.Errorf("the aborted run still records an abort request")
	}
	for _, st := range run.Status.Stages[:2] {
		if st.Backup == nil || len(st.Backup.Secrets) == 0 {
			t.Errorf("stage %s lost its backup on abort", st.Name)
		}
	}

	rb := w.mustExit(0, nil, "rollback", "shop-2.0.0")
	mustContain(t, "rollback output", rb.stdout, "RolledBack")
	w.assertRestored(before)
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunRolledBack {
		t.Errorf("after rollback the run is %s, want RolledBack", ph)
	}
}
