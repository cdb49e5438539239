package install_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/install"
)

// No rule of the chart (with every optional part on) nor of the kustomize
// overlays grants a `*` of anything.
func TestNoWildcardInRBAC(t *testing.T) {
	sets := map[string]int{}
	check := func(what string, objs []*unstructured.Unstructured) {
		t.Helper()
		roles := 0
		for _, o := range objs {
			if o.GetKind() == "Role" || o.GetKind() == "ClusterRole" {
				roles++
			}
		}
		sets[what] = roles
		for _, w := range install.Wildcards(objs) {
			t.Errorf("%s: %s", what, w)
		}
	}
	check("chart (defaults)", renderChart(t, nil))
	check("chart (serviceMonitor, leader election off)", renderChart(t, values("serviceMonitor.enabled", true, "leaderElection.enabled", false)))
	check("config/default", buildKustomize(t, defaultDir))
	check("config/rbac", buildKustomize(t, filepath.Join(repoRoot, "config", "rbac")))
	for what, n := range sets {
		if n < 3 {
			t.Errorf("%s holds %d Roles and ClusterRoles, want at least 3: is the RBAC still rendered?", what, n)
		}
	}
}

// The check itself finds a `*` wherever a rule may hold one.
func TestWildcardsFindsEveryField(t *testing.T) {
	rule := func(mutate func(*rbacv1.PolicyRule)) rbacv1.PolicyRule {
		r := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}
		mutate(&r)
		return r
	}
	cases := map[string]rbacv1.PolicyRule{
		"verbs":           rule(func(r *rbacv1.PolicyRule) { r.Verbs = []string{"get", "*"} }),
		"apiGroups":       rule(func(r *rbacv1.PolicyRule) { r.APIGroups = []string{"*"} }),
		"resources":       rule(func(r *rbacv1.PolicyRule) { r.Resources = []string{"pods/*"} }),
		"resourceNames":   rule(func(r *rbacv1.PolicyRule) { r.ResourceNames = []string{"a*"} }),
		"nonResourceURLs": {NonResourceURLs: []string{"/metrics/*"}, Verbs: []string{"get"}},
	}
	for field, r := range cases {
		objs := []*unstructured.Unstructured{toUnstructured(t, &rbacv1.ClusterRole{
			TypeMeta:   typeMeta("ClusterRole"),
			ObjectMeta: objectMeta("wild"),
			Rules:      []rbacv1.PolicyRule{rule(func(*rbacv1.PolicyRule) {}), r},
		})}
		got := install.Wildcards(objs)
		if len(got) != 1 || !strings.Contains(got[0], "rules[1]."+field) {
			t.Errorf("a * in %s: Wildcards said %q, want one finding naming rules[1].%s", field, got, field)
		}
	}
	agg := []*unstructured.Unstructured{toUnstructured(t, &rbacv1.ClusterRole{
		TypeMeta: typeMeta("ClusterRole"), ObjectMeta: objectMeta("agg"),
		AggregationRule: &rbacv1.AggregationRule{},
	})}
	if got := install.Wildcards(agg); len(got) != 1 {
		t.Errorf("an aggregated ClusterRole: Wildcards said %q, want one finding", got)
	}
}

// The chart grants exactly what config/rbac grants (config/rbac is the
// source of truth), to the same ServiceAccount, through the same bindings.
func TestChartRBACEqualsKustomize(t *testing.T) {
	chart := renderChart(t, nil)
	kust := buildKustomize(t, defaultDir)
	chartRoles, err := install.Roles(chart)
	if err != nil {
		t.Fatal(err)
	}
	kustRoles, err := install.Roles(kust)
	if err != nil {
		t.Fatal(err)
	}
	if len(kustRoles) != 4 {
		t.Errorf("config/default has %d roles, want 4 (controller ClusterRole and Role, leader election, metrics reader): %v", len(kustRoles), kustRoles)
	}
	if d := cmp.Diff(kustRoles, chartRoles); d != "" {
		t.Errorf("the chart's roles differ from config/rbac's (-kustomize +chart): make charts/upshift/templates grant what config/rbac grants:\n%s", d)
	}
	chartBindings, err := install.Bindings(chart)
	if err != nil {
		t.Fatal(err)
	}
	kustBindings, err := install.Bindings(kust)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(kustBindings, chartBindings); d != "" {
		t.Errorf("the chart's bindings differ from config/rbac's (-kustomize +chart):\n%s", d)
	}
}

// Under another release name and namespace, every binding names the
// chart's ServiceAccount in the release's namespace.
func TestChartBindsItsServiceAccount(t *testing.T) {
	objs, err := install.RenderChart(chartDir, "acme", "ops", nil)
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := install.Bindings(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(bindings) != 3 {
		t.Errorf("%d bindings, want 3: %v", len(bindings), bindings)
	}
	for k, b := range bindings {
		if !strings.HasSuffix(b, "-> ServiceAccount ops/acme-upshift-controller") {
			t.Errorf("%s: %s; want it bound to ServiceAccount ops/acme-upshift-controller", k, b)
		}
	}
	roles, err := install.Roles(objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ClusterRole/acme-upshift-controller", "Role/ops/acme-upshift-controller", "Role/ops/acme-upshift-leader-election", "ClusterRole/acme-upshift-metrics-reader"} {
		if _, ok := roles[k]; !ok {
			t.Errorf("no %s among %v", k, keys(roles))
		}
	}
}

func TestExpand(t *testing.T) {
	got := install.Expand([]rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps"}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"a"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	})
	var s []string
	for _, p := range got {
		s = append(s, p.String())
	}
	want := []string{"get /metrics", "get secrets", "get secrets a", "get secrets.apps", "list secrets", "list secrets.apps"}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("Expand (-want +got):\n%s", d)
	}
}
