package engine_test

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// An installation step sets its record's state through the status
// subresource: a user who may create Installations but not update their
// status is refused by preflight, naming installations/status, before
// anything changes; granted it, the same user passes. On
// embedded-cluster's real Installation CRD.
func TestPreflightNamesAStepsStatusRight(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	testenv.InstallUpstreamCRD(t, w.c.RESTConfig(), "embedded-cluster/embeddedcluster.replicated.com_installations.yaml", "the installation step's preflight")
	const user = "installer"
	if _, err := w.cs.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "upshift-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.bindCluster(user, "admin-of-runs", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, true)
	rule := rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch", "create"}, APIGroups: []string{"embeddedcluster.replicated.com"}, Resources: []string{"installations"}}
	w.bindCluster(user, "installations", rule, false)
	kc, err := w.c.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: record}
spec:
  version: 2.17.0
  stages:
  - name: Runtime
    steps:
    - name: record
      installation: {state: Installing, spec: {config: {version: 2.17.0}}}
`)
	r := w.upshift([]string{"KUBECONFIG=" + kc}, "plan", "-f", filepath.Join(dir, "plan.yaml"))
	if r.code != 1 {
		t.Fatalf("want exit 1 naming installations/status, got %s", r)
	}
	mustContain(t, "preflight", r.stderr, "spec.stages[0].steps[0].installation", "may not update installations/status")

	rule.Resources = append(rule.Resources, "installations/status")
	rule.Verbs = append(rule.Verbs, "update")
	w.bindCluster(user, "installations-status", rule, false)
	w.eventually("preflight passes once installations/status may be updated", func() (bool, string) {
		r := w.upshift([]string{"KUBECONFIG=" + kc}, "plan", "-f", filepath.Join(dir, "plan.yaml"))
		return r.code == 0, r.String()
	})
}

// bindCluster grants user rule through a ClusterRole of name: bound in
// the runs namespace only when inRuns, else cluster-wide.
func (w *world) bindCluster(user, name string, rule rbacv1.PolicyRule, inRuns bool) {
	w.t.Helper()
	_, err := w.cs.RbacV1().ClusterRoles().Create(w.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user + "-" + name}
	subjects := []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}
	meta := metav1.ObjectMeta{Name: user + "-" + name}
	if inRuns {
		_, err = w.cs.RbacV1().RoleBindings("upshift-system").Create(w.ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	} else {
		_, err = w.cs.RbacV1().ClusterRoleBindings().Create(w.ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	}
	if err != nil {
		w.t.Fatal(err)
	}
}
