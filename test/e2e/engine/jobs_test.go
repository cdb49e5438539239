package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// jobManifest is a Job in namespace shop whose image tag decides its fate
// on the fake nodes: a tag containing "fail" exits 1.
func jobManifest(name, tag string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s, namespace: shop}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: migrate, image: "example.com/shop/migrate:%s"}
`, name, tag)
}

// migrationPlan: stage schema runs a migration Job (with a down-migration),
// then stage workloads upgrades web (broken when webTag says so).
func (w *world) migrationPlan(migrateTag, webTag string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "up.yaml"), jobManifest("migrate-2-0-0", migrateTag))
	write(w.t, filepath.Join(dir, "down.yaml"), jobManifest("migrate-2-0-0-down", "2.0.0"))
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: schema
    steps:
    - name: migrate
      job: {path: up.yaml, rollbackJob: {path: down.yaml}}
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:%s"}}
`, webTag))
	return filepath.Join(dir, "plan.yaml")
}

// TestMigrationRollsBackWithItsDownMigration: the migration ran, the next
// stage fails, and the rollback runs the down-migration Job, removes the
// migration Job the stage created, and restores the workloads.
func TestMigrationRollsBackWithItsDownMigration(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	r := w.mustExit(2, nil, "apply", "-f", w.migrationPlan("2.0.0", "2.0.0-broken"))
	mustContain(t, "apply stderr", r.stderr, "step web failed", "rolled back")
	down, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, "migrate-2-0-0-down", metaGet)
	if err != nil {
		t.Fatalf("the down-migration Job did not run: %v", err)
	}
	if down.Status.Succeeded != 1 {
		t.Errorf("down-migration Job: succeeded=%d failed=%d", down.Status.Succeeded, down.Status.Failed)
	}
	w.eventually("the migration Job the stage created is deleted", func() (bool, string) {
		_, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, "migrate-2-0-0", metaGet)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	w.assertRestored(before)
}

// TestFailingMigrationNamesExitCodeAndLog: a migration that exits 1 fails
// its step with the exit code and the tail of its log, and the run rolls
// back (its down-migration runs too: the step ran).
func TestFailingMigrationNamesExitCodeAndLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	r := w.mustExit(2, nil, "apply", "-f", w.migrationPlan("2.0.0-fail", "2.0.0"))
	mustContain(t, "apply stderr", r.stderr, "step migrate failed", "exited with code 1", "this container runs on a kwok fake node")
	w.assertRestored(before)
}

// TestRetriedAttemptRunsItsOwnMigrations: attempt 1 migrates, fails at a
// later stage and rolls back, running the down-migration. apply --retry
// (attempt 2) runs the migration again, and its rollback runs the
// down-migration again: a completed down-migration Job of attempt 1 is not
// taken for attempt 2's, so "restore verified" never stands on a schema
// that was not put back.
func TestRetriedAttemptRunsItsOwnMigrations(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	plan := w.migrationPlan("2.0.0", "2.0.0-broken")

	w.mustExit(2, nil, "apply", "-f", plan)
	w.waitJobsCreated("attempt 1", map[string]int{"migrate-2-0-0": 1, "migrate-2-0-0-down": 1})

	r := w.mustExit(2, nil, "apply", "-f", plan, "--retry")
	mustContain(t, "apply --retry stderr", r.stderr, "step web failed", "restore verified")
	w.waitJobsCreated("attempt 2", map[string]int{"migrate-2-0-0": 2, "migrate-2-0-0-down": 2})

	down, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, "migrate-2-0-0-down", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	if a := down.Annotations["upshift.dev/run-attempt"]; a != "2" || down.Status.Succeeded != 1 {
		t.Errorf("down-migration Job: attempt %q, succeeded %d; want attempt 2's, completed", a, down.Status.Succeeded)
	}
	run := w.run("shop-2.0.0")
	if run.Status.Attempt != 2 || run.Status.Phase != v1alpha1.RunRolledBack {
		t.Fatalf("run: attempt %d, %s; want attempt 2, RolledBack", run.Status.Attempt, run.Status.Phase)
	}
	schema := run.Status.Stages[0].Message
	mustContain(t, "stage schema message", schema, "rollback job: job shop/migrate-2-0-0-down completed")
	if strings.Contains(schema, "already completed") {
		t.Errorf("attempt 2's rollback took attempt 1's down-migration for its own: %s", schema)
	}
	w.eventually("the migration Job attempt 2 created is deleted", func() (bool, string) {
		_, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, "migrate-2-0-0", metaGet)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	w.assertRestored(before)
}

// waitJobsCreated waits until the audit log shows upshift creating each
// named Job in namespace shop exactly as many times as want says (a
// server-side apply that creates answers 201), and fails if it shows
// another count after 30s.
func (w *world) waitJobsCreated(what string, want map[string]int) {
	w.t.Helper()
	w.eventually(what+": Jobs created", func() (bool, string) {
		got := map[string]int{}
		for _, e := range w.upshiftWrites() {
			if e.ObjectRef != nil && e.ObjectRef.Resource == "jobs" && e.ObjectRef.Namespace == "shop" &&
				e.ResponseStatus != nil && e.ResponseStatus.Code == 201 {
				got[e.ObjectRef.Name]++
			}
		}
		for name, n := range want {
			if got[name] != n {
				return false, fmt.Sprintf("created %v, want %v", got, want)
			}
		}
		return true, ""
	})
}

// TestRollbackRefusesADownMigrationItDidNotRun: a completed Job of the
// down-migration's name that this rollback did not create (here made by
// hand) is not taken for the down-migration: the rollback fails (exit 3,
// RollbackFailed) naming the Job and the fix, instead of reporting a
// verified restore; deleting the Job and rolling back again runs it.
func TestRollbackRefusesADownMigrationItDidNotRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	noRetry := int32(0)
	stray := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate-2-0-0-down", Namespace: "shop"},
		Spec: batchv1.JobSpec{BackoffLimit: &noRetry, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "migrate", Image: "example.com/shop/migrate:2.0.0"}},
		}}},
	}
	if _, err := w.cs.BatchV1().Jobs("shop").Create(w.ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.eventually("the hand-made Job completes", func() (bool, string) {
		j, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, stray.Name, metaGet)
		if err != nil {
			return false, err.Error()
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("succeeded %d", j.Status.Succeeded)
	})

	r := w.mustExit(3, nil, "apply", "-f", w.migrationPlan("2.0.0", "2.0.0-broken"))
	mustContain(t, "apply stderr", r.stderr, "the rollback failed",
		"job shop/migrate-2-0-0-down exists and this rollback did not create it (it was not created by an Upshift run)", "delete that Job")
	if strings.Contains(r.stderr, "restore verified") {
		t.Errorf("the rollback claims a verified restore without running its down-migration:\n%s", r.stderr)
	}
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunRollbackFailed {
		t.Fatalf("run %s, want RollbackFailed", ph)
	}

	// The fix the message names: delete the Job, roll back again.
	fg := metav1.DeletePropagationForeground
	if err := w.cs.BatchV1().Jobs("shop").Delete(w.ctx, stray.Name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	w.mustExit(0, nil, "rollback", "shop-2.0.0")
	down, err := w.cs.BatchV1().Jobs("shop").Get(w.ctx, stray.Name, metaGet)
	if err != nil {
		t.Fatalf("the down-migration did not run: %v", err)
	}
	if down.Annotations["upshift.dev/run"] != "shop-2.0.0" || down.Status.Succeeded != 1 {
		t.Errorf("down-migration Job: annotations %v, succeeded %d; want the rollback's own, completed", down.Annotations, down.Status.Succeeded)
	}
	w.assertRestored(before)
}
