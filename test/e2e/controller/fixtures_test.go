package controller_test

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The platform under test: a ConfigMap web-config (data.version) and a
// Deployment web (container web, image example.com/web:<version>).
const startVersion = "1.0"

func (e *env) installWeb() {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"}, Data: map[string]string{"version": startVersion}}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.com/web:" + startVersion}}},
			},
		},
	}
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// webImage is the Deployment's image now.
func (e *env) webImage() string {
	e.t.Helper()
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

func (e *env) webConfig() string {
	e.t.Helper()
	cm, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(e.ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return cm.Data["version"]
}

// grant makes ServiceAccount sa in the test's namespace, allowed the verbs
// on what the web plan touches (all of the plan's needs unless a verb is
// left out).
func (e *env) grant(sa string, verbs ...string) {
	e.t.Helper()
	if len(verbs) == 0 {
		verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	}
	if _, err := e.cs.CoreV1().ServiceAccounts(e.ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: verbs},
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		},
	}
	if _, err := e.cs.RbacV1().Roles(e.ns).Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: e.ns}},
	}
	if _, err := e.cs.RbacV1().RoleBindings(e.ns).Create(e.ctx, rb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// webPlan moves the config to version and the Deployment to the image
// tag, in two stages (an approval step between them when approval is set).
func (e *env) webPlan(name, version, tag, sa string, approval bool) *v1alpha1.UpgradePlan {
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: %s\ndata:\n  version: %q\n", e.ns, version)
	stages := []v1alpha1.Stage{{
		Name:  "config",
		Steps: []v1alpha1.Step{{Name: "web-config", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: cm}}}},
	}}
	if approval {
		stages = append(stages, v1alpha1.Stage{Name: "check", Steps: []v1alpha1.Step{{Name: "go-ahead", Approval: &v1alpha1.ApprovalStep{Message: "config is on " + version}}}})
	}
	stages = append(stages, v1alpha1.Stage{
		Name: "app",
		Steps: []v1alpha1.Step{{Name: "web", Image: &v1alpha1.ImageStep{
			Kind: "Deployment", Namespace: e.ns, Name: "web", Images: map[string]string{"web": "example.com/web:" + tag},
		}}},
		Gates: []v1alpha1.Gate{{Timeout: &metav1.Duration{Duration: time.Minute}, Ready: &v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Name: "web"}}},
	})
	return &v1alpha1.UpgradePlan{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.UpgradePlanSpec{Version: version, ServiceAccountName: sa, Stages: stages},
	}
}
