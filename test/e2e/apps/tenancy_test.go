package apps_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A rollout acts with its ServiceAccount's rights, never the
// controller's: one whose ServiceAccount may not read Deployments says
// so, naming the ServiceAccount, and changes nothing.
func TestRolloutActsAsItsServiceAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.cs.CoreV1().ServiceAccounts(e.ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.deployment("api", "registry.example.com/api:v1", 2)
	e.startController("ctl-tenancy")
	app := canaryRollout(e.ns, "api", "v2", []v1alpha1.AppCanaryStep{{Weight: 50}})
	app.Spec.ServiceAccountName = "nobody"
	if err := e.kc.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	got := e.waitFor("api", "refused its ServiceAccount's missing rights", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return strings.Contains(a.Status.Message, "may not get deployments")
	})
	if !strings.Contains(got.Status.Message, "serviceaccount "+e.ns+"/nobody") {
		t.Errorf("message %q does not name the ServiceAccount", got.Status.Message)
	}
	if img := e.getDeployment("api").Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/api:v1" {
		t.Errorf("deployment changed to %s", img)
	}
}

// A rollout in the controller's own namespace is refused before it reads
// anything: that namespace's rights are the controller's alone.
func TestRolloutInTheControllersNamespaceIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("api", "registry.example.com/api:v1", 1)
	e.startController("ctl-own-namespace", "--namespace", e.ns) // the last --namespace counts
	if err := e.kc.Create(e.ctx, canaryRollout(e.ns, "api", "v2", []v1alpha1.AppCanaryStep{{Weight: 50}})); err != nil {
		t.Fatal(err)
	}
	got := e.waitFor("api", "Stalled", time.Minute, func(a *v1alpha1.AppRollout) bool {
		c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionStalled)
		return c != nil && c.Reason == v1alpha1.ReasonRefused
	})
	if !strings.Contains(got.Status.Message, "metadata.namespace: "+e.ns+" is the controller's own namespace") {
		t.Errorf("message %q", got.Status.Message)
	}
	if got.Status.Attempt != 0 || got.Status.Backup != nil {
		t.Errorf("a refused rollout started: %+v", got.Status)
	}
}
