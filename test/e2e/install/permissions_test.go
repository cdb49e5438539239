package install_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// check is one access review: a verb on a resource (or a non-resource
// URL), in a namespace ("" for every namespace, or cluster-scoped).
type check struct {
	verb, group, resource, subresource, name, namespace, url string
}

func (c check) String() string {
	if c.url != "" {
		return c.verb + " " + c.url
	}
	s := c.verb + " " + c.resource
	if c.subresource != "" {
		s += "/" + c.subresource
	}
	if c.group != "" {
		s += "." + c.group
	}
	if c.name != "" {
		s += " " + c.name
	}
	if c.namespace == "" {
		return s + " (all namespaces)"
	}
	return s + " in " + c.namespace
}

// each expands one check per verb.
func each(verbs []string, c check) []check {
	var out []check
	for _, v := range verbs {
		c.verb = v
		out = append(out, c)
	}
	return out
}

// controllerNeeds is what the controller needs, written from its design
// (not read from the chart): cluster-wide, and in its own namespace ns.
func controllerNeeds(ns string) []check {
	rw := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	var out []check
	add := func(cs ...check) { out = append(out, cs...) }
	// Cluster-wide.
	add(each([]string{"get", "list", "watch", "patch"}, check{group: "upshift.dev", resource: "upgradeplans"})...)
	add(each([]string{"get", "update", "patch"}, check{group: "upshift.dev", resource: "upgradeplans", subresource: "status"})...)
	add(check{verb: "update", group: "upshift.dev", resource: "upgradeplans", subresource: "finalizers"})
	add(each([]string{"get", "list", "watch", "patch"}, check{group: "upshift.dev", resource: "platformupgrades"})...)
	add(check{verb: "update", group: "upshift.dev", resource: "platformupgrades", subresource: "finalizers"})
	add(each([]string{"get", "list", "watch", "patch"}, check{group: "upshift.dev", resource: "clusterversions"})...)
	add(each([]string{"get", "update", "patch"}, check{group: "upshift.dev", resource: "clusterversions", subresource: "status"})...)
	add(check{verb: "update", group: "upshift.dev", resource: "clusterversions", subresource: "finalizers"})
	add(each([]string{"get", "list", "watch"}, check{group: "upshift.dev", resource: "approllouts"})...)
	add(each([]string{"get", "update", "patch"}, check{group: "upshift.dev", resource: "approllouts", subresource: "status"})...)
	add(each([]string{"create", "patch"}, check{resource: "events", namespace: "team-a"})...)
	add(each([]string{"create", "patch"}, check{group: "events.k8s.io", resource: "events", namespace: "team-a"})...)
	add(check{verb: "impersonate", resource: "serviceaccounts", namespace: "team-a", name: "deployer"})
	add(each([]string{"get", "list", "watch"}, check{group: "apiextensions.k8s.io", resource: "customresourcedefinitions"})...)
	add(check{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews"})
	add(check{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews"})
	// Its own namespace.
	add(each(rw, check{resource: "secrets", namespace: ns})...)
	add(each(rw, check{group: "upshift.dev", resource: "upgraderuns", namespace: ns})...)
	add(each(rw, check{group: "upshift.dev", resource: "upgraderuns", subresource: "status", namespace: ns})...)
	add(each([]string{"get", "create", "update"}, check{group: "coordination.k8s.io", resource: "leases", namespace: ns})...)
	add(each([]string{"create", "patch"}, check{resource: "events", namespace: ns})...)
	return out
}

// controllerMustNot is what the controller must not be able to do: what a
// plan changes is done as the plan's ServiceAccount.
func controllerMustNot(ns string) []check {
	return []check{
		{verb: "*", group: "*", resource: "*"},
		{verb: "*", group: "*", resource: "*", namespace: ns},
		{verb: "list", resource: "secrets", namespace: "default"},
		{verb: "get", resource: "secrets", namespace: "default", name: "any"},
		{verb: "list", resource: "secrets"},
		{verb: "get", resource: "configmaps", namespace: "default"},
		{verb: "create", group: "upshift.dev", resource: "upgradeplans", namespace: "default"},
		{verb: "update", group: "upshift.dev", resource: "upgradeplans", namespace: "default"},
		{verb: "delete", group: "upshift.dev", resource: "upgradeplans", namespace: "default"},
		{verb: "update", group: "upshift.dev", resource: "clusterversions", namespace: "default"},
		{verb: "delete", group: "upshift.dev", resource: "clusterversions", namespace: "default"},
		{verb: "patch", group: "upshift.dev", resource: "approllouts", namespace: "default"},
		{verb: "update", group: "apps", resource: "deployments", namespace: "default"},
		{verb: "list", group: "upshift.dev", resource: "upgraderuns", namespace: "default"},
		{verb: "create", group: "upshift.dev", resource: "upgraderuns", namespace: "default"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "default"},
		{verb: "delete", group: "coordination.k8s.io", resource: "leases", namespace: ns},
		{verb: "impersonate", resource: "users"},
		{verb: "impersonate", resource: "groups"},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: "team-a", name: "deployer"},
		{verb: "get", resource: "serviceaccounts", namespace: "team-a"},
		{verb: "get", resource: "namespaces"},
		{verb: "create", group: "apps", resource: "deployments", namespace: ns},
		{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
		// A freeze step's policy is written and deleted as the plan's
		// ServiceAccount, never as the controller.
		{verb: "create", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicies"},
		{verb: "delete", group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicybindings"},
		{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: ns},
		{verb: "get", url: "/metrics"},
	}
}

// The chart's ServiceAccount may do what the controller needs, and none of
// what it must not: asked of the API server with the ServiceAccount's own
// token (SelfSubjectAccessReview), so RBAC as installed decides. The chart
// installs as Helm installs it, and the controller's Deployment rolls out.
func TestChartGrantsWhatTheControllerNeeds(t *testing.T) {
	admin := testenv.Cluster(t).RESTConfig()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	rel := installChart(t, ctx, admin, nil)
	sa := serviceAccountConfig(t, ctx, admin, rel.Namespace, rel.ServiceAccount)

	needs := controllerNeeds(rel.Namespace)
	for _, c := range needs {
		if allowed, why := review(t, ctx, sa, c); !allowed {
			t.Errorf("ServiceAccount %s/%s may not %s (%s): the controller needs it", rel.Namespace, rel.ServiceAccount, c, why)
		}
	}
	for _, c := range controllerMustNot(rel.Namespace) {
		if allowed, why := review(t, ctx, sa, c); allowed {
			t.Errorf("ServiceAccount %s/%s may %s (%s): it must not", rel.Namespace, rel.ServiceAccount, c, why)
		}
	}
	t.Logf("checked %d permissions to grant and %d to deny", len(needs), len(controllerMustNot(rel.Namespace)))

	waitAvailable(t, ctx, admin, rel.Namespace, rel.ServiceAccount)
}

// The chart's metrics-reader ClusterRole lets whoever it is bound to read
// /metrics, and nothing else.
func TestChartMetricsReader(t *testing.T) {
	admin := testenv.Cluster(t).RESTConfig()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	rel := installChart(t, ctx, admin, map[string]any{"leaderElection": map[string]any{"enabled": false}})
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(rel.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scraper := serviceAccountConfig(t, ctx, admin, rel.Namespace, "scraper")
	metrics := check{verb: "get", url: "/metrics"}
	if allowed, _ := review(t, ctx, scraper, metrics); allowed {
		t.Fatalf("an unbound ServiceAccount may %s: the check below would prove nothing", metrics)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: rel.Name + "-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rel.Fullname + "-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: rel.Namespace, Name: "scraper"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
	})
	// RBAC's authorizer sees a new binding through its informer: shortly.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		allowed, _ := review(t, ctx, scraper, metrics)
		return allowed, nil
	})
	if err != nil {
		t.Errorf("bound to %s, ServiceAccount scraper still may not %s", binding.RoleRef.Name, metrics)
	}
	for _, c := range []check{{verb: "get", url: "/healthz/x"}, {verb: "list", resource: "secrets", namespace: rel.Namespace}} {
		if allowed, why := review(t, ctx, scraper, c); allowed {
			t.Errorf("the metrics reader may %s (%s)", c, why)
		}
	}
	// Without leader election the chart has no Role for it.
	if _, err := cs.RbacV1().Roles(rel.Namespace).Get(ctx, rel.Fullname+"-leader-election", metav1.GetOptions{}); err == nil {
		t.Error("leaderElection.enabled=false installed the leader-election Role")
	}
}

// review asks the API server, as cfg's user, whether it may do c.
func review(t *testing.T, ctx context.Context, cfg *rest.Config, c check) (bool, string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &authorizationv1.SelfSubjectAccessReview{}
	if c.url != "" {
		r.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: c.url, Verb: c.verb}
	} else {
		r.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace: c.namespace, Verb: c.verb, Group: c.group, Resource: c.resource,
			Subresource: c.subresource, Name: c.name,
		}
	}
	got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectAccessReview of %s: %v", c, err)
	}
	return got.Status.Allowed, fmt.Sprintf("allowed %t, reason %q", got.Status.Allowed, got.Status.Reason)
}

// waitAvailable waits until the Deployment has an available replica (the
// local cluster's fake kubelet runs any pod the API server admitted).
func waitAvailable(t *testing.T, ctx context.Context, admin *rest.Config, ns, name string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	var d *appsv1.Deployment
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err = cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 1, nil
	})
	if err != nil {
		t.Errorf("Deployment %s/%s has no available replica after 30s: %v (status %+v)", ns, name, err, d)
	}
}
