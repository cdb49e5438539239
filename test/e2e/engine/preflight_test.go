package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestPreflightAsksOneRulesReviewPerNamespace: preflight of a plan
// touching one namespace asks one SelfSubjectRulesReview for it, one for
// the run's namespace and one for cluster-scoped resources, and no
// SelfSubjectAccessReview, where it used to ask one access review per
// verb, resource and namespace (dozens, a hundred for the demo).
func TestPreflightAsksOneRulesReviewPerNamespace(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.reviews(upshiftUser)

	// The plan's nodesReady gate needs a cluster-scoped read.
	w.mustExit(0, nil, "plan", "-f", w.withGate(w.upgradePlan(planOptions{}), "nodesReady: {}"))

	after := w.reviews(upshiftUser)
	access := after["selfsubjectaccessreviews"] - before["selfsubjectaccessreviews"]
	rules := after["selfsubjectrulesreviews"] - before["selfsubjectrulesreviews"]
	t.Logf("preflight of `upshift plan`: %d access reviews, %d rules reviews", access, rules)
	if access != 0 || rules != 3 {
		t.Errorf("preflight asked %d access reviews and %d rules reviews; want 0 and 3 (namespaces shop and upshift-system, and cluster scope)", access, rules)
	}
}

// TestPreflightClusterScopeNeedsAClusterWideGrant: a user who is admin of
// the plan's namespaces through RoleBindings to cluster-admin sees `*` in
// those namespaces' rules reviews, but may not list nodes: only a
// ClusterRoleBinding grants cluster-scoped access. Preflight names the
// missing cluster-wide reads and nothing in the namespaces.
func TestPreflightClusterScopeNeedsAClusterWideGrant(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	const user = "namespace-admin"
	for _, ns := range []string{"shop", "upshift-system"} {
		_, err := w.cs.RbacV1().RoleBindings(ns).Create(w.ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	kc, err := w.c.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	plan := w.withGate(w.upgradePlan(planOptions{}), "nodesReady: {}")
	r := w.upshift([]string{"KUBECONFIG=" + kc}, "plan", "-f", plan)
	if r.code != 1 {
		t.Fatalf("want exit 1 naming the cluster-wide reads, got %s", r)
	}
	mustContain(t, "preflight", r.stderr, "may not list nodes cluster-wide", "may not watch nodes cluster-wide")
	if strings.Contains(r.stderr, "in namespace") {
		t.Errorf("a namespaced access granted by the RoleBindings reported missing:\n%s", r.stderr)
	}

	// Bound cluster-wide to read nodes, the same user passes.
	_, err = w.cs.RbacV1().ClusterRoles().Create(w.ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "node-reader"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"nodes"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.cs.RbacV1().ClusterRoleBindings().Create(w.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-nodes"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "node-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.eventually("preflight passes once nodes may be read cluster-wide", func() (bool, string) {
		r := w.upshift([]string{"KUBECONFIG=" + kc}, "plan", "-f", plan)
		return r.code == 0, r.String()
	})
}

// withGate adds a gate to the last stage of a plan written by upgradePlan.
func (w *world) withGate(plan, gate string) string {
	w.t.Helper()
	out := filepath.Join(filepath.Dir(plan), "plan-with-gate.yaml")
	b, err := os.ReadFile(plan)
	if err != nil {
		w.t.Fatal(err)
	}
	write(w.t, out, string(b)+"    - "+gate+"\n")
	return out
}

// reviews counts the user's access and rules reviews in the audit log.
func (w *world) reviews(user string) map[string]int {
	w.t.Helper()
	time.Sleep(time.Second) // the audit log is written asynchronously
	events, err := w.c.ReadAudit()
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range localcluster.ByUser(events, user) {
		if e.ObjectRef != nil && strings.HasSuffix(e.ObjectRef.Resource, "reviews") {
			out[e.ObjectRef.Resource]++
		}
	}
	return out
}
