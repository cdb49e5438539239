package controller_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/steps/freeze"
)

// A plan deleted while its run waits, frozen, at an approval: the
// deletion waits on the plan's finalizer until the run is aborted where
// it was (its freeze lifted: creates are allowed again, the policy is
// gone), the run lease is free, and the run record stays, saying so.
func TestDeletingAPlanMidRunLeavesNothingInForce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.grantFreeze("upgrader")
	frozen := testenv.Namespace(t, e.ctx, e.cs, "ctl-frozen")
	e.startController("ctl-delete", nil)
	e.createPlan(e.freezingPlan("web-2", frozen))
	p := e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)
	if !strings.Contains(strings.Join(p.Finalizers, ","), v1alpha1.FinalizerRun) {
		t.Errorf("the plan has no finalizer %s: %v", v1alpha1.FinalizerRun, p.Finalizers)
	}
	run := p.Status.Run
	if _, err := e.cs.CoreV1().ConfigMaps(frozen).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("create in %s while the run waits: %v; want denied by the freeze", frozen, err)
	}

	if out, err := e.kubectl("delete", "upgradeplan", "web-2", "-n", e.ns, "--timeout=90s"); err != nil {
		t.Fatalf("kubectl delete upgradeplan web-2: %v\n%s", err, out)
	}
	name := freeze.Name(e.runs, run, "freeze")
	if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted plan's freeze policy %s: %v; want it lifted", name, err)
	}
	waitFor(t, "a create in the frozen namespace allowed", func() bool {
		_, err := e.cs.CoreV1().ConfigMaps(frozen).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "after-"}}, metav1.CreateOptions{})
		return err == nil
	})
	if r := e.run(run); r == nil || r.Status.Phase != v1alpha1.RunAborted {
		t.Errorf("the deleted plan's run %s: %+v; want it kept, Aborted", run, r)
	}
	if id, valid, err := lease.Holder(e.ctx, e.cs, e.runs, lease.DefaultName); err != nil || valid {
		t.Errorf("the run lease after the deletion: held %v by %v (%v); want it free", valid, id, err)
	}
	if got := e.webImage(); got != "example.com/web:"+startVersion {
		t.Errorf("web moved to %s past the approval", got)
	}
}

// A PlatformUpgrade deleted while its hop waits at an approval: the
// deletion waits until the hop is aborted where it was and the run lease
// is free; the hop's run record stays.
func TestDeletingAPlatformUpgradeMidHopLeavesNothingInForce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.approvalCatalog("web-catalog")
	e.startController("ctl-delete-platform", nil)
	e.createPlatformUpgrade("web", "1.1", "web-catalog", "upgrader")
	waitFor(t, "the hop waiting at its approval", func() bool {
		h := e.getPlatformUpgrade("web").Status.Hops
		return len(h) == 1 && h[0].Phase == v1alpha1.RunRunning && e.webConfig() == "1.1"
	})
	run := e.getPlatformUpgrade("web").Status.Hops[0].Run

	if out, err := e.kubectl("delete", "platformupgrade", "web", "-n", e.ns, "--timeout=90s"); err != nil {
		t.Fatalf("kubectl delete platformupgrade web: %v\n%s", err, out)
	}
	if r := e.run(run); r == nil || r.Status.Phase != v1alpha1.RunAborted {
		t.Errorf("the deleted upgrade's hop %s: %+v; want it kept, Aborted", run, r)
	}
	if id, valid, err := lease.Holder(e.ctx, e.cs, e.runs, lease.DefaultName); err != nil || valid {
		t.Errorf("the run lease after the deletion: held %v by %v (%v); want it free", valid, id, err)
	}
	if got := e.webImage(); got != "example.com/web:"+startVersion {
		t.Errorf("web moved to %s past the approval", got)
	}
}
