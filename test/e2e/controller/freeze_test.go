package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/steps/freeze"
)

// grantFreeze lets ServiceAccount sa write and delete admission policies
// and their bindings, cluster-wide: what a freeze step needs.
func (e *env) grantFreeze(sa string) {
	e.t.Helper()
	name := e.ns + "-" + sa + "-freeze"
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
			Verbs:     []string{"get", "create", "patch", "delete"}}},
	}
	if _, err := e.cs.RbacV1().ClusterRoles().Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: e.ns}},
	}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Create(e.ctx, binding, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = e.cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// freezingPlan is the web plan whose approval stage first freezes the
// creation of ConfigMaps in namespace frozen.
func (e *env) freezingPlan(name, frozen string) *v1alpha1.UpgradePlan {
	p := e.webPlan(name, "2.0", "2.0", "upgrader", true)
	hold := &p.Spec.Stages[1] // check: the approval
	hold.Steps = append([]v1alpha1.Step{{Name: "freeze", Freeze: &v1alpha1.FreezeStep{
		Rules:      []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Operations: []string{"CREATE"}}},
		Namespaces: []string{frozen},
		Message:    "frozen for the web upgrade",
	}}}, hold.Steps...)
	return p
}

// A plan the controller drives freezes as its ServiceAccount, and the
// controller lifts the freeze whenever the run ends: aborted at the
// approval (the freeze is gone), retried (it holds again), approved and
// succeeded (gone again, nothing left).
func TestControllerRunFreezesUntilItEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.grantFreeze("upgrader")
	frozen := testenv.Namespace(t, e.ctx, e.cs, "ctl-frozen")
	e.startController("ctl-freeze", nil)

	e.createPlan(e.freezingPlan("web-2", frozen))

	made := 0
	create := func() error {
		made++
		_, err := e.cs.CoreV1().ConfigMaps(frozen).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("user-%d", made)}}, metav1.CreateOptions{})
		return err
	}
	frozenNow := func(when string) {
		t.Helper()
		if err := create(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "frozen for the web upgrade") {
			t.Fatalf("%s: create in %s: %v; want denied with the plan's message", when, frozen, err)
		}
		if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(e.ctx, freeze.Name(e.runs, e.ns+".web-2", "freeze"), metav1.GetOptions{}); err != nil {
			t.Fatalf("%s: the freeze's policy: %v", when, err)
		}
	}
	lifted := func(when string) {
		t.Helper()
		name := freeze.Name(e.runs, e.ns+".web-2", "freeze")
		if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s: policy %s: %v; want it gone", when, name, err)
		}
		if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s: binding %s: %v; want it gone", when, name, err)
		}
		if err := create(); err != nil {
			t.Fatalf("%s: create in %s: %v; want allowed", when, frozen, err)
		}
	}

	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)
	frozenNow("waiting for the approval")
	e.annotate("web-2", v1alpha1.AnnotationAbort, "1")
	e.waitCondition("web-2", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonAborted, time.Minute)
	lifted("aborted")
	e.annotate("web-2", v1alpha1.AnnotationRetry, "1")
	// WaitingForApproval may still be True from the aborted attempt, so the
	// wait is on the retried run: no longer stalled (the condition goes),
	// and its freeze back in force (policy there, a create denied).
	refrozen := func() bool {
		if meta.IsStatusConditionTrue(e.getPlan("web-2").Status.Conditions, v1alpha1.ConditionStalled) {
			return false // the retry is not taken yet
		}
		_, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(e.ctx, freeze.Name(e.runs, e.ns+".web-2", "freeze"), metav1.GetOptions{})
		if err != nil {
			return false
		}
		err = create()
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "frozen for the web upgrade")
	}
	for deadline := time.Now().Add(time.Minute); !refrozen(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("retried: the freeze is not back in force after a minute; status:\n%s", toYAML(e.getPlan("web-2").Status))
		}
	}
	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)
	frozenNow("retried, waiting for the approval again")
	e.annotate("web-2", v1alpha1.AnnotationApprove, "go-ahead")
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	lifted("succeeded")
}
