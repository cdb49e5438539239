package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A plan resource whose manifests come from a ConfigMap of its namespace
// runs to Ready, the ConfigMap read as the plan's ServiceAccount; one
// whose manifests come from a Secret that ServiceAccount may not get is
// refused before any write, naming the field and the permission.
func TestPlanFromAConfigMapRunsToReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader") // configmaps, deployments, ...: no secrets
	e.startController("ctl-sources", nil)

	manifests := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: %s\ndata:\n  version: \"2.0\"\n", e.ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-manifests"}, Data: map[string]string{"web-config.yaml": manifests}}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := e.webPlan("web-2", "2.0", "2.0", "upgrader", false)
	p.Spec.Stages[0].Steps[0].Manifests.Source = v1alpha1.Source{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "web-manifests"}}
	e.createPlan(p)
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := e.webConfig(); got != "2.0" {
		t.Errorf("web-config's version is %s, want 2.0 (from the ConfigMap)", got)
	}
	if got := e.webImage(); got != "example.com/web:2.0" {
		t.Errorf("web's image is %s, want example.com/web:2.0", got)
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-manifests"}, StringData: map[string]string{"web-config.yaml": strings.Replace(manifests, "2.0", "3.0", 1)}}
	if _, err := e.cs.CoreV1().Secrets(e.ns).Create(e.ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = e.webPlan("web-3", "3.0", "3.0", "upgrader", false)
	p.Spec.Stages[0].Steps[0].Manifests.Source = v1alpha1.Source{Secret: &v1alpha1.ObjectKeyRef{Name: "web-manifests", Key: "web-config.yaml"}}
	e.createPlan(p)
	got := e.waitCondition("web-3", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonPreflightFailed, time.Minute)
	c := findCondition(got, v1alpha1.ConditionStalled)
	for _, want := range []string{
		"spec.stages[0].steps[0].manifests.secret",
		"ServiceAccount " + e.ns + "/upgrader may not get secrets in namespace " + e.ns + ": grant get on secrets",
		"nothing was changed",
	} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Stalled message does not say %q:\n%s", want, c.Message)
		}
	}
	if got := e.webConfig(); got != "2.0" {
		t.Errorf("web-config changed to %s by a refused plan", got)
	}
}
