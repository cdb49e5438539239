package apps_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A canary whose pods never become ready (kwok crash-loops an image
// tagged "broken") fails at its deadline and is rolled back: the canary
// deleted, the Deployment put back equal to its capture, and the
// down-migration run after the migration.
func TestBrokenCanaryRollsBackWithTheDownMigration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("shop", "registry.example.com/shop:v1", 4)
	before := e.waitReady("shop")
	e.startController("ctl-rollback")

	app := &v1alpha1.AppRollout{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: e.ns},
		Spec: v1alpha1.AppRolloutSpec{
			Version: "v2-broken", ServiceAccountName: "deployer", ProgressDeadlineSeconds: ptr.To[int32](5),
			UpgradeStrategy: v1alpha1.AppUpgradeStrategy{
				Type: v1alpha1.StrategyCanary,
				MigrationJob: &v1alpha1.AppMigrationJob{Image: "registry.example.com/shop-migrations:v2",
					Command: []string{"migrate", "up"}, RollbackCommand: []string{"migrate", "down"}},
				Canary: &v1alpha1.AppCanary{Enabled: true, Steps: []v1alpha1.AppCanaryStep{{Weight: 25}, {Weight: 100}}},
			},
		},
	}
	if err := e.kc.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	done := e.waitFor("shop", "RolledBack", 2*time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack })
	rb := done.Status.Rollback
	if rb == nil || !rb.Restored || len(rb.Differences) > 0 || rb.DownMigrationJob != "shop-down-migration-v2-broken" || !strings.Contains(rb.Reason, "canary pods not ready within 5s") {
		t.Fatalf("rollback %+v", rb)
	}
	if c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionStalled); c == nil || c.Reason != v1alpha1.ReasonRolledBack {
		t.Errorf("conditions %+v: want Stalled, reason RolledBack", done.Status.Conditions)
	}
	down := e.job("shop-down-migration-v2-broken")
	if down.Labels["type"] != "down-migration" || !jobDone(down) || !slices.Equal(down.Spec.Template.Spec.Containers[0].Command, []string{"migrate", "down"}) {
		t.Errorf("down-migration Job: labels %v, complete %t, command %v", down.Labels, jobDone(down), down.Spec.Template.Spec.Containers[0].Command)
	}
	if !e.job("shop-migration-v2-broken").CreationTimestamp.Before(&down.CreationTimestamp) && !e.job("shop-migration-v2-broken").CreationTimestamp.Equal(&down.CreationTimestamp) {
		t.Error("the down-migration was created before the migration")
	}
	if _, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "shop-canary", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("canary deployment after the rollback: %v; want it deleted", err)
	}
	after := e.waitReady("shop")
	if !equality.Semantic.DeepEqual(before.Spec, after.Spec) {
		t.Errorf("deployment spec after the rollback differs from its capture:\nbefore %+v\nafter  %+v", before.Spec, after.Spec)
	}
	events := strings.Join(e.events("shop"), "\n")
	for _, want := range []string{"Normal MigrationStarted", "Warning RolloutFailed", "Normal DownMigrationStarted", "Warning RolledBack"} {
		if !strings.Contains(events, want) {
			t.Errorf("events do not have %q:\n%s", want, events)
		}
	}
}

// waitReady waits until the Deployment's pods are all updated and ready.
func (e *env) waitReady(name string) *appsv1.Deployment {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d := e.getDeployment(name)
		if d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.ReadyReplicas == *d.Spec.Replicas {
			return d
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("deployment %s not ready after a minute", name)
	return nil
}

// events lists the rollout's events as "Type Reason: message".
func (e *env) events(name string) []string {
	e.t.Helper()
	list, err := e.cs.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=AppRollout,involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
	}
	return out
}
