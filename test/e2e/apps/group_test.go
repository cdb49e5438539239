package apps_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A group of three services, each after the one before: the third's
// canary never gets ready, so it is rolled back, then the second, then
// the first, each with its down-migration, and every Deployment is as
// it was captured.
func TestGroupRollsBackInReverseOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	names := []string{"accounts", "orders", "billing"}
	before := map[string]*appsv1.Deployment{}
	for _, n := range names {
		e.deployment(n, "registry.example.com/"+n+":v1", 2)
		before[n] = e.waitReady(n)
	}
	e.startController("ctl-group")
	for i, n := range names {
		app := &v1alpha1.AppRollout{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: e.ns},
			Spec: v1alpha1.AppRolloutSpec{Version: "v2", ServiceAccountName: "deployer",
				UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyRollingWithMigration,
					MigrationJob: &v1alpha1.AppMigrationJob{Image: "registry.example.com/" + n + "-migrations:v2", RollbackCommand: []string{"down"}}}},
		}
		if i > 0 {
			app.Spec.After = names[i-1]
		}
		if n == "billing" {
			app.Spec.Version, app.Spec.ProgressDeadlineSeconds = "v2-broken", ptr.To[int32](5)
			app.Spec.UpgradeStrategy.Type = v1alpha1.StrategyCanary
			app.Spec.UpgradeStrategy.Canary = &v1alpha1.AppCanary{Enabled: true, Steps: []v1alpha1.AppCanaryStep{{Weight: 50}}}
		}
		if err := e.kc.Create(e.ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	rolledBack := func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack }
	accounts := e.waitFor("accounts", "RolledBack", 2*time.Minute, rolledBack)
	orders, billing := e.rollout("orders"), e.rollout("billing")
	for _, c := range []struct {
		a      *v1alpha1.AppRollout
		group  bool
		reason string
	}{
		{billing, false, "canary pods not ready within 5s"},
		{orders, true, "approllout billing, after this one in its group, was rolled back"},
		{accounts, true, "approllout orders, after this one in its group, was rolled back"},
	} {
		rb := c.a.Status.Rollback
		if c.a.Status.Phase != v1alpha1.AppRolledBack || rb == nil || rb.Group != c.group || !strings.Contains(rb.Reason, c.reason) || len(rb.Differences) > 0 {
			t.Errorf("%s: phase %s, rollback %+v; want RolledBack saying %q", c.a.Name, c.a.Status.Phase, rb, c.reason)
			continue
		}
		if !jobDone(e.job(rb.DownMigrationJob)) {
			t.Errorf("%s: down-migration %s not done", c.a.Name, rb.DownMigrationJob)
		}
	}
	if !orders.Status.Backup.CreatedAt.Before(billing.Status.Backup.CreatedAt) && !orders.Status.Backup.CreatedAt.Equal(billing.Status.Backup.CreatedAt) {
		t.Errorf("billing started (%s) before orders (%s)", billing.Status.Backup.CreatedAt, orders.Status.Backup.CreatedAt)
	}
	for _, n := range names {
		if after := e.waitReady(n); !equality.Semantic.DeepEqual(before[n].Spec, after.Spec) {
			t.Errorf("deployment %s is not as captured: image %s", n, after.Spec.Template.Spec.Containers[0].Image)
		}
	}
}
