package apps

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The seed's sample: a migration, then canary steps 10 % and 50 %, then
// 100 %.
func seedSpec() v1alpha1.AppRolloutSpec {
	return v1alpha1.AppRolloutSpec{
		Image: "registry.example.com/shop", Version: "v2.0.0",
		UpgradeStrategy: v1alpha1.AppUpgradeStrategy{
			Type:         v1alpha1.StrategyCanary,
			MigrationJob: &v1alpha1.AppMigrationJob{Image: "registry.example.com/shop-migrations:v2.0.0", Command: []string{"/bin/migrate", "up"}, RollbackCommand: []string{"/bin/migrate", "down"}},
			Canary:       &v1alpha1.AppCanary{Enabled: true, Steps: []v1alpha1.AppCanaryStep{{Weight: 10, Pause: 300}, {Weight: 50, Pause: 300}, {Weight: 100}}},
		},
	}
}

func TestCanaryWithMigrationRollsToItsVersion(t *testing.T) {
	w := newWorld(t, seedSpec(), 10, "registry.example.com/shop:v1.0.0")
	w.step()
	w.wantTrace("Migrating capture")
	if st := w.app.Status; st.Attempt != 1 || st.CurrentVersion != "v1.0.0" || st.TargetVersion != "v2.0.0" || st.StableImage != "registry.example.com/shop:v1.0.0" || st.Replicas != 10 || st.Backup == nil {
		t.Fatalf("after the capture: %+v", st)
	}
	w.step()
	w.step()
	w.wantTrace("Migrating create migration", "Migrating none")
	endJob(w.jobs["shop-migration-v2-0-0"], batchv1.JobComplete, "")
	w.step()
	w.step()
	w.wantTrace("Deploying set canary 10% 1+9", "Deploying none")
	if w.app.Status.PauseStartedAt == nil || w.app.Status.CanaryWeight != 10 {
		t.Fatalf("the pause did not begin once the canary was ready: %+v", w.app.Status)
	}
	w.step() // the world's clock moved on by the 300 s the step held
	w.step()
	w.wantTrace("Deploying set canary 50% 5+5", "Deploying none")
	w.app.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"}
	w.run(10)
	w.wantTrace("HealthChecking deploy registry.example.com/shop:v2.0.0", "Healthy none")
	st := w.app.Status
	if st.CurrentVersion != "v2.0.0" || st.CanaryWeight != 0 || w.canary != nil || replicasOf(w.dep) != 10 || firstImage(w.dep) != "registry.example.com/shop:v2.0.0" {
		t.Errorf("after the promotion: status %+v, canary %v, replicas %d, image %s", st, w.canary, replicasOf(w.dep), firstImage(w.dep))
	}
	if !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady) || meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReconciling) != nil {
		t.Errorf("conditions %+v, want Ready and not Reconciling", st.Conditions)
	}
	if !Idle(w.app, nil, nil) {
		t.Error("a Healthy rollout at its version is not idle")
	}
}

func TestDeploymentAtTheVersionIsAdopted(t *testing.T) {
	w := newWorld(t, seedSpec(), 3, "registry.example.com/shop:v2.0.0")
	w.run(3)
	w.wantTrace("Healthy none")
	if w.app.Status.Attempt != 0 || w.app.Status.Backup != nil {
		t.Errorf("adopting started an attempt: %+v", w.app.Status)
	}
}

func TestFailedMigrationRollsBackWithTheDownMigration(t *testing.T) {
	w := newWorld(t, seedSpec(), 4, "registry.example.com/shop:v1.0.0")
	w.run(3)
	endJob(w.jobs["shop-migration-v2-0-0"], batchv1.JobFailed, "BackoffLimitExceeded")
	w.run(3)
	w.wantTrace("Migrating capture", "Migrating create migration", "Migrating none", "Failed none", "Failed restore", "Failed create down-migration")
	if r := w.app.Status.Rollback; r == nil || !strings.Contains(r.Reason, "migration Job shop-migration-v2-0-0 failed: BackoffLimitExceeded") {
		t.Fatalf("rollback %+v", r)
	}
	endJob(w.jobs["shop-down-migration-v2-0-0"], batchv1.JobComplete, "")
	w.run(3)
	w.wantTrace("RolledBack none")
	if !meta.IsStatusConditionTrue(w.app.Status.Conditions, v1alpha1.ConditionStalled) || !Idle(w.app, nil, nil) {
		t.Errorf("a rolled-back rollout is not Stalled and idle: %+v", w.app.Status.Conditions)
	}
	// A retry is a new attempt with Jobs of its own.
	w.app.Annotations = map[string]string{v1alpha1.AnnotationRetry: "now"}
	w.run(2)
	w.wantTrace("Migrating capture", "Migrating create migration")
	if w.app.Status.Attempt != 2 || w.app.Status.MigrationJob != "shop-migration-v2-0-0-2" {
		t.Errorf("retry: %+v", w.app.Status)
	}
}

func TestCanaryNotReadyInTimeRollsBack(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	spec.ProgressDeadlineSeconds = new(int32)
	*spec.ProgressDeadlineSeconds = 60
	w := newWorld(t, spec, 2, "registry.example.com/shop:v1.0.0")
	w.settle = func(w *world) {
		if w.canary != nil {
			unready(w.canary)
		}
	}
	w.run(40)
	if got := w.trace[len(w.trace)-1]; got != "RolledBack none" {
		t.Fatalf("ended with %q:\n%s", got, strings.Join(w.trace, "\n"))
	}
	if r := w.app.Status.Rollback; !strings.Contains(r.Reason, "canary pods not ready within 1m0s") {
		t.Errorf("reason %q", r.Reason)
	}
	if w.canary != nil || replicasOf(w.dep) != 2 {
		t.Errorf("after the rollback: canary %v, stable replicas %d", w.canary, replicasOf(w.dep))
	}
}

func TestAbortRollsBack(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	w := newWorld(t, spec, 10, "registry.example.com/shop:v1.0.0")
	w.run(3)
	w.app.Annotations = map[string]string{v1alpha1.AnnotationAbort: "x"}
	w.run(5)
	w.wantTrace("Deploying capture", "Deploying set canary 10% 1+9", "Deploying none", "Failed none", "Failed restore", "RolledBack none")
	if w.app.Status.HandledActions[v1alpha1.AnnotationAbort] != "x" {
		t.Errorf("abort not marked handled: %v", w.app.Status.HandledActions)
	}
}

// Paused holds the step and its time: resumed, the canary's pause goes
// on with what it had left.
func TestPausedHoldsTheStepAndItsTime(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	w := newWorld(t, spec, 10, "registry.example.com/shop:v1.0.0")
	w.run(3) // the 10 % step's pause began
	w.now = w.app.Status.PauseStartedAt.Add(100 * time.Second)
	w.app.Spec.Paused = true
	d := w.step()
	if d.Action != None || d.RequeueAfter != 0 || w.app.Status.PausedAt == nil || !meta.IsStatusConditionTrue(w.app.Status.Conditions, v1alpha1.ConditionPaused) {
		t.Fatalf("paused: %+v, status %+v", d, w.app.Status)
	}
	w.now = w.now.Add(time.Hour)
	w.app.Spec.Paused = false
	d = w.step()
	if d.Action != None || d.RequeueAfter != 200*time.Second {
		t.Errorf("resumed: action %s, requeue %s; want none and the 200s the pause had left", d.Action, d.RequeueAfter)
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct{ total, weight, canary, stable int32 }{
		{10, 10, 1, 9}, {10, 50, 5, 5}, {3, 10, 1, 2}, {1, 10, 1, 1}, {4, 33, 2, 2}, {10, 0, 0, 10},
	} {
		if canary, stable := split(c.total, c.weight); canary != c.canary || stable != c.stable {
			t.Errorf("split(%d, %d%%) = %d+%d, want %d+%d", c.total, c.weight, canary, stable, c.canary, c.stable)
		}
	}
}

func TestNamesFit(t *testing.T) {
	app := &v1alpha1.AppRollout{}
	app.Name = strings.Repeat("a", 60)
	a, b := MigrationJobName(app, "v1", 1), MigrationJobName(app, "v2", 1)
	if len(a) > 63 || a == b {
		t.Errorf("names %q and %q: want distinct, at most 63 characters", a, b)
	}
	app.Name = "shop"
	if got := MigrationJobName(app, "V2.0_rc1", 3); got != "shop-migration-v2-0-rc1-3" {
		t.Errorf("got %q", got)
	}
}

// A step with untilPromoted holds once its pods are ready, however long,
// asking to be looked at again for nothing; a promote moves it on.
func TestStepHeldUntilPromoted(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	spec.UpgradeStrategy.Canary.Steps = []v1alpha1.AppCanaryStep{{Weight: 50, UntilPromoted: true}, {Weight: 100}}
	w := newWorld(t, spec, 4, "registry.example.com/shop:v1.0.0")
	w.run(10)
	st := w.app.Status
	if st.Phase != v1alpha1.AppDeploying || st.CanaryWeight != 50 || st.PauseStartedAt == nil || !strings.Contains(st.Message, "holding until promoted") {
		t.Fatalf("not held at 50%%: %+v", st)
	}
	w.now = w.now.Add(30 * 24 * time.Hour)
	if d := w.step(); d.Action != None || d.RequeueAfter != 0 || w.app.Status.Phase != v1alpha1.AppDeploying {
		t.Errorf("a month later: %+v, phase %s: want held, nothing to look again for", d, w.app.Status.Phase)
	}
	if got := Steps(w.app, w.now)[0]; got.State != StepCurrent || got.Detail != "holding until promoted" || !got.UntilPromoted {
		t.Errorf("the strip's step: %+v", got)
	}
	w.app.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"}
	w.run(10)
	if st := w.app.Status; st.Phase != v1alpha1.AppHealthy || firstImage(w.dep) != "registry.example.com/shop:v2.0.0" {
		t.Errorf("after the promote: %s, image %s", st.Phase, firstImage(w.dep))
	}
}
