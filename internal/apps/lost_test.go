package apps

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A save lost after an action (a crash, a refused write) is no reason to
// fail, nor to do the action again in a way that undoes it.
func TestLostSavesAreRecoveredFromTheCluster(t *testing.T) {
	t.Run("the migration Job created, not recorded", func(t *testing.T) {
		w := newWorld(t, seedSpec(), 4, "registry.example.com/shop:v1.0.0")
		w.step() // captured
		saved := w.app.Status
		w.step() // created the Job; the save is lost
		w.app.Status = saved
		d := w.step()
		if d.Status.Phase != v1alpha1.AppMigrating || d.Status.MigrationJob != "shop-migration-v2-0-0" || d.Status.Rollback != nil {
			t.Errorf("after the lost save: phase %s, job %q, rollback %+v; want the Job adopted", d.Status.Phase, d.Status.MigrationJob, d.Status.Rollback)
		}
	})
	t.Run("the promotion done, not recorded", func(t *testing.T) {
		spec := seedSpec()
		spec.UpgradeStrategy.MigrationJob = nil
		spec.UpgradeStrategy.Canary.Steps = []v1alpha1.AppCanaryStep{{Weight: 50}, {Weight: 100}}
		w := newWorld(t, spec, 4, "registry.example.com/shop:v1.0.0")
		w.run(2) // captured, canary at 50 %
		saved := w.app.Status
		w.trace = nil
		if d := w.step(); d.Action != Deploy {
			t.Fatalf("want the promotion, got %s", d.Action)
		}
		w.app.Status = saved // the save is lost
		w.trace = nil
		w.run(3)
		w.wantTrace("HealthChecking none", "Healthy none")
		if replicasOf(w.dep) != 4 || w.canary != nil {
			t.Errorf("the promotion was undone: stable replicas %d, canary %v", replicasOf(w.dep), w.canary)
		}
	})
}

// A retry that must wait (here for the window) stays asked until the
// rollout starts, instead of being marked handled and forgotten.
func TestRetryThatWaitsStaysAsked(t *testing.T) {
	spec := seedSpec()
	spec.Windows = []v1alpha1.UpgradeWindow{{Schedule: "0 2 * * *", Duration: metav1.Duration{Duration: time.Hour}}}
	w := newWorld(t, spec, 2, "registry.example.com/shop:v1.0.0")
	w.app.Status = v1alpha1.AppRolloutStatus{Phase: v1alpha1.AppRolledBack, TargetVersion: "v2.0.0", CurrentVersion: "v1.0.0", Attempt: 1, ObservedGeneration: 1,
		Rollback: &v1alpha1.AppRollback{Reason: "x", Restored: true, Done: true}}
	w.app.Annotations = map[string]string{v1alpha1.AnnotationRetry: "now"}
	d := w.step()
	if d.Action != None || d.Status.HandledActions[v1alpha1.AnnotationRetry] == "now" || Idle(w.app, nil, nil) {
		t.Errorf("retry outside the window: %s, handled %v, idle %t; want it still asked", d.Action, d.Status.HandledActions, Idle(w.app, nil, nil))
	}
}

// What a person deleted or made under the rollout's names fails the
// rollout, with a message, not a crash loop.
func TestForeignOrMissingObjectsFailTheRollout(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	w := newWorld(t, spec, 4, "registry.example.com/shop:v1.0.0")
	w.step()
	w.canary = canaryDeployment(w.app, 1, w.dep, "somebody/else:1", 1)
	w.canary.Annotations = nil
	if d := w.step(); d.Status.Phase != v1alpha1.AppFailed || !strings.Contains(d.Status.Rollback.Reason, "deployment shop-canary exists and this rollout did not create it") {
		t.Errorf("a foreign canary: phase %s, rollback %+v", d.Status.Phase, d.Status.Rollback)
	}

	c := spec.UpgradeStrategy.Canary
	c.StableService, c.CanaryService = "shop", "shop-canary"
	c.TrafficRouting = &v1alpha1.AppTrafficRouting{GatewayAPI: &v1alpha1.GatewayAPIRouting{HTTPRoute: "shop"}}
	w = newWorld(t, spec, 4, "registry.example.com/shop:v1.0.0")
	w.stableSvc = &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "shop"}}}
	w.canarySvc = w.stableSvc.DeepCopy()
	w.route = &gatewayv1.HTTPRoute{}
	w.step()
	w.canarySvc = nil // deleted mid-canary
	if d := w.step(); d.Status.Phase != v1alpha1.AppFailed || !strings.Contains(d.Status.Rollback.Reason, "service team-a/shop-canary not found") {
		t.Errorf("the canary Service deleted: phase %s, rollback %+v", d.Status.Phase, d.Status.Rollback)
	}
}
