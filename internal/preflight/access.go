package preflight

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// clusterScopeReviewNamespace is the namespace the rules review for
// cluster-scoped checks names. A rules review is per namespace and lists
// the rules of the ClusterRoleBindings plus the RoleBindings of that
// namespace; a RoleBinding to a ClusterRole that names nodes shows nodes
// in its namespace's review although it grants nothing cluster-wide. No
// namespace can be called this (not a DNS label), so no RoleBinding lives
// there and the review holds exactly the cluster-wide grants.
const clusterScopeReviewNamespace = "upshift.dev:cluster-scope"

// rulesReview is what one SelfSubjectRulesReview said.
type rulesReview struct {
	rules []rbacv1.PolicyRule
	// complete is false when the server could not list every rule (an
	// authorizer that cannot enumerate, such as a webhook; an evaluation
	// error) or the review itself failed: what the rules do not allow
	// must then be asked one by one.
	complete bool
}

// reviewAccess decides every needed access with one rules review per
// namespace involved (one more for cluster-scoped resources) instead of
// one access review per verb and resource, and asks access reviews only
// for what an incomplete rules review did not allow.
func (pf *preflight) reviewAccess(ctx context.Context) {
	keys := pf.accessKeys()
	allowed, ask := judgeByRules(keys, pf.rulesReviews(ctx, keys))
	errs := make([]error, len(keys))
	pf.accessReviews(ctx, keys, ask, allowed, errs)
	for i, k := range keys {
		where := "cluster-wide"
		if k.namespace != "" {
			where = "in namespace " + k.namespace
		}
		resource := k.gvr.Resource
		if k.gvr.Group != "" {
			resource += "." + k.gvr.Group
		}
		whats := pf.access[k]
		if errs[i] != nil {
			pf.errs = append(pf.errs, field.InternalError(field.NewPath(whats[0]), fmt.Errorf("access review for %s %s: %w", k.verb, resource, errs[i])))
			continue
		}
		if !allowed[i] {
			pf.errs = append(pf.errs, &field.Error{Type: field.ErrorTypeForbidden, Field: whats[0],
				Detail: fmt.Sprintf("these credentials may not %s %s %s (needed by %d item(s)); grant it, e.g. with a Role/ClusterRole, or use other credentials", k.verb, resource, where, len(whats))})
		}
	}
}

// accessKeys are the needed accesses in the order problems are reported.
func (pf *preflight) accessKeys() []accessKey {
	keys := make([]accessKey, 0, len(pf.access))
	for k := range pf.access {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.gvr.String() != b.gvr.String() {
			return a.gvr.String() < b.gvr.String()
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.verb < b.verb
	})
	return keys
}

// judgeByRules says which accesses the rules reviews allow, and which
// (by index) must still be asked one by one: those a review that may
// have left rules out did not allow.
func judgeByRules(keys []accessKey, reviews map[string]rulesReview) (allowed []bool, ask []int) {
	allowed = make([]bool, len(keys))
	for i, k := range keys {
		r := reviews[reviewNamespace(k)]
		allowed[i] = rulesAllow(r.rules, k)
		if !allowed[i] && !r.complete {
			ask = append(ask, i)
		}
	}
	return allowed, ask
}

func reviewNamespace(k accessKey) string {
	if k.namespace == "" {
		return clusterScopeReviewNamespace
	}
	return k.namespace
}

// rulesReviews asks one SelfSubjectRulesReview per namespace the keys
// name, side by side. A review that fails counts as incomplete and
// empty: the access reviews that follow then report the real verdict, or
// the error, for each access.
func (pf *preflight) rulesReviews(ctx context.Context, keys []accessKey) map[string]rulesReview {
	var namespaces []string
	seen := map[string]bool{}
	for _, k := range keys {
		if ns := reviewNamespace(k); !seen[ns] {
			seen[ns] = true
			namespaces = append(namespaces, ns)
		}
	}
	results := make([]rulesReview, len(namespaces))
	var g errgroup.Group
	g.SetLimit(maxParallelReviews)
	for i, ns := range namespaces {
		g.Go(func() error {
			review := &authv1.SelfSubjectRulesReview{Spec: authv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
			res, err := pf.d.Client.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return nil // incomplete: the access reviews ask again and report
			}
			results[i] = rulesReview{
				rules:    policyRules(res.Status.ResourceRules),
				complete: !res.Status.Incomplete && res.Status.EvaluationError == "",
			}
			return nil
		})
	}
	_ = g.Wait() // each review reports through results
	out := make(map[string]rulesReview, len(namespaces))
	for i, ns := range namespaces {
		out[ns] = results[i]
	}
	return out
}

func policyRules(rs []authv1.ResourceRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rs))
	for i, r := range rs {
		out[i] = rbacv1.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames}
	}
	return out
}

// rulesAllow reports whether the rules allow the access on every object
// of its resource (no resource name): the comparison RBAC itself uses to
// judge escalation, with its wildcards for verbs, groups, resources and
// subresources ("*/log").
func rulesAllow(rules []rbacv1.PolicyRule, k accessKey) bool {
	want := rbacv1.PolicyRule{Verbs: []string{k.verb}, APIGroups: []string{k.gvr.Group}, Resources: []string{k.gvr.Resource}}
	ok, _ := rbacvalidation.Covers(rules, []rbacv1.PolicyRule{want})
	return ok
}

// accessReviews asks a SelfSubjectAccessReview for each key at the given
// indexes, side by side, and records the verdicts and errors there.
func (pf *preflight) accessReviews(ctx context.Context, keys []accessKey, at []int, allowed []bool, errs []error) {
	var g errgroup.Group
	g.SetLimit(maxParallelReviews)
	for _, i := range at {
		k := keys[i]
		g.Go(func() error {
			resName, sub, _ := strings.Cut(k.gvr.Resource, "/") // pods/log: a subresource
			review := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
				Verb: k.verb, Group: k.gvr.Group, Resource: resName, Subresource: sub, Namespace: k.namespace,
			}}}
			res, err := pf.d.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			errs[i] = err
			allowed[i] = err == nil && res.Status.Allowed
			return nil
		})
	}
	_ = g.Wait() // the reviews report through errs
}

// maxParallelReviews bounds the reviews in flight: one at a time they
// cost a round trip each.
const maxParallelReviews = 8
