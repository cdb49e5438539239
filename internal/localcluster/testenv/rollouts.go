package testenv

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// GrantRollouts gives ServiceAccount sa of namespace ns (made unless it
// is "default") what an AppRollout acting as it needs (docs/apps.md,
// "Whose rights"): its Deployments, ReplicaSets, Services, HTTPRoutes,
// Jobs, pods and their logs, and the Secrets its backups are kept in.
func GrantRollouts(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, sa string) {
	t.Helper()
	if sa != "default" {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "rollout-" + sa},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
			{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"httproutes"}, Verbs: []string{"get", "update"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		},
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
