package apps

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func member(name, after string, phase v1alpha1.AppPhase, at time.Time) *v1alpha1.AppRollout {
	t := metav1.NewTime(at)
	a := &v1alpha1.AppRollout{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: "uid-" + "name", Generation: 1},
		Spec: v1alpha1.AppRolloutSpec{After: after, Version: "v2", UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyRolling}},
		Status: v1alpha1.AppRolloutStatus{Phase: phase, PhaseStartedAt: &t, TargetVersion: "v2", Attempt: 1, ObservedGeneration: 1,
			Backup: &v1alpha1.BackupRef{CreatedAt: &t}}}
	if phase == v1alpha1.AppHealthy {
		a.Status.CurrentVersion = "v2"
	}
	if phase == v1alpha1.AppRolledBack {
		a.Status.Rollback = &v1alpha1.AppRollback{Reason: "canary pods not ready", Restored: true, Done: true}
	}
	return a
}

// In a group a → b → c, c starts only once b is Healthy; when c is
// rolled back, b rolls back, then a; a member rolled back for its group
// starts again once the one before it is Healthy again.
func TestGroupMovesTogether(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	w := newWorld(t, v1alpha1.AppRolloutSpec{Version: "v2", After: "b", UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyRolling}}, 2, "registry.example.com/shop:v1")
	b := member("b", "a", v1alpha1.AppDeploying, t0)
	d := Decide(Observed{App: w.app, Deployment: w.dep, Before: b, Now: t0})
	if d.Action != None || !strings.Contains(d.Status.Message, "waits for approllout b, before it in its group, to be Healthy at v2 (it is Deploying)") {
		t.Errorf("c before b is Healthy: %s, %q", d.Action, d.Status.Message)
	}

	b = member("b", "a", v1alpha1.AppHealthy, t0)
	c := member("c", "b", v1alpha1.AppRolledBack, t0.Add(time.Minute))
	if Idle(b, nil, []*v1alpha1.AppRollout{c}) {
		t.Fatal("b is idle though c after it was rolled back")
	}
	d = Decide(Observed{App: b, Next: []*v1alpha1.AppRollout{c}, Now: t0.Add(2 * time.Minute)})
	if rb := d.Status.Rollback; d.Status.Phase != v1alpha1.AppFailed || rb == nil || !rb.Group || !strings.Contains(rb.Reason, "approllout c, after this one in its group, was rolled back (canary pods not ready)") {
		t.Fatalf("b after c's rollback: phase %s, rollback %+v", d.Status.Phase, d.Status.Rollback)
	}

	old := member("c", "b", v1alpha1.AppRolledBack, t0.Add(-time.Hour)) // an attempt before b's
	if d := Decide(Observed{App: b, Next: []*v1alpha1.AppRollout{old}, Now: t0.Add(time.Minute)}); d.Status.Phase != v1alpha1.AppHealthy || !Idle(b, nil, []*v1alpha1.AppRollout{old}) {
		t.Errorf("b rolled back for an older attempt of c: %s", d.Status.Phase)
	}

	b = member("b", "a", v1alpha1.AppRolledBack, t0.Add(3*time.Minute))
	b.Status.Rollback.Group = true
	a := member("a", "", v1alpha1.AppHealthy, t0.Add(10*time.Minute))
	if Idle(b, a, nil) {
		t.Fatal("b rolled back for its group is idle though a is Healthy again")
	}
	w.app, w.dep.Name = b, "b"
	w.app.Spec.After = "a"
	d = Decide(Observed{App: b, Deployment: w.dep, Before: a, Now: t0.Add(11 * time.Minute)})
	if d.Action != Capture || d.Status.Attempt != 2 {
		t.Errorf("b once a is Healthy again: %s, attempt %d; want a new attempt", d.Action, d.Status.Attempt)
	}
}
