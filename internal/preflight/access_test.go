package preflight

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func key(verb, group, resource, ns string) accessKey {
	return accessKey{verb: verb, gvr: schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, namespace: ns}
}

// TestRulesAllowWithRBACWildcards: the rules of a review are read the way
// RBAC reads them.
func TestRulesAllowWithRBACWildcards(t *testing.T) {
	rule := func(verbs, groups, resources, names []string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
	}
	all := []string{"*"}
	cases := []struct {
		name  string
		rules []rbacv1.PolicyRule
		k     accessKey
		want  bool
	}{
		{"cluster-admin", []rbacv1.PolicyRule{rule(all, all, all, nil)}, key("delete", "apps", "deployments", "x"), true},
		{"exact", []rbacv1.PolicyRule{rule([]string{"get", "patch"}, []string{"apps"}, []string{"deployments"}, nil)}, key("patch", "apps", "deployments", "x"), true},
		{"other verb", []rbacv1.PolicyRule{rule([]string{"get"}, []string{"apps"}, []string{"deployments"}, nil)}, key("patch", "apps", "deployments", "x"), false},
		{"other group", []rbacv1.PolicyRule{rule(all, []string{"extensions"}, []string{"deployments"}, nil)}, key("get", "apps", "deployments", "x"), false},
		{"core group is the empty string", []rbacv1.PolicyRule{rule(all, []string{""}, []string{"pods"}, nil)}, key("list", "", "pods", "x"), true},
		{"any verb", []rbacv1.PolicyRule{rule(all, []string{"apps"}, []string{"daemonsets"}, nil)}, key("update", "apps", "daemonsets", "x"), true},
		{"any resource of a group", []rbacv1.PolicyRule{rule([]string{"create"}, []string{"apiextensions.k8s.io"}, all, nil)}, key("create", "apiextensions.k8s.io", "customresourcedefinitions", ""), true},
		{"a resource does not cover its subresource", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"}, nil)}, key("get", "", "pods/log", "x"), false},
		{"subresource", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods/log"}, nil)}, key("get", "", "pods/log", "x"), true},
		{"subresource of any resource", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"*/log"}, nil)}, key("get", "", "pods/log", "x"), true},
		{"named objects only", []rbacv1.PolicyRule{rule([]string{"get", "update"}, []string{""}, []string{"secrets"}, []string{"upshift-run-a"})}, key("update", "", "secrets", "x"), false},
		{"no rules", nil, key("get", "", "pods", "x"), false},
		{"one of several rules", []rbacv1.PolicyRule{
			rule([]string{"get"}, []string{""}, []string{"configmaps"}, nil),
			rule([]string{"list", "watch"}, []string{""}, []string{"pods"}, nil),
		}, key("watch", "", "pods", "x"), true},
	}
	for _, c := range cases {
		if got := rulesAllow(c.rules, c.k); got != c.want {
			t.Errorf("%s: rulesAllow(%s %s) = %v, want %v", c.name, c.k.verb, c.k.gvr.Resource, got, c.want)
		}
	}
}

// TestIncompleteRulesAreAskedOneByOne: where a rules review may have left
// rules out (a webhook authorizer, a failed review), what it did not allow
// is asked with an access review; what it allowed, and what a complete
// review denied, is not asked again.
func TestIncompleteRulesAreAskedOneByOne(t *testing.T) {
	read := rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"*"}, Resources: []string{"*"}}
	keys := []accessKey{
		key("get", "apps", "deployments", "complete"),                          // 0 allowed
		key("patch", "apps", "deployments", "complete"),                        // 1 denied for sure
		key("get", "apps", "deployments", "incomplete"),                        // 2 allowed
		key("patch", "apps", "deployments", "incomplete"),                      // 3 ask
		key("create", "apiextensions.k8s.io", "customresourcedefinitions", ""), // 4 cluster scope: denied for sure
		key("patch", "", "secrets", "failed"),                                  // 5 ask
	}
	reviews := map[string]rulesReview{
		"complete":                  {rules: []rbacv1.PolicyRule{read}, complete: true},
		"incomplete":                {rules: []rbacv1.PolicyRule{read}},
		clusterScopeReviewNamespace: {rules: []rbacv1.PolicyRule{read}, complete: true},
		// "failed": no review at all
	}
	allowed, ask := judgeByRules(keys, reviews)
	if want := []bool{true, false, true, false, false, false}; !slices.Equal(allowed, want) {
		t.Errorf("allowed = %v, want %v", allowed, want)
	}
	if want := []int{3, 5}; !slices.Equal(ask, want) {
		t.Errorf("asked one by one: %v, want %v", ask, want)
	}
}
