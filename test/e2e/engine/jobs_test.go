package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
