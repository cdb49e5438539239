package install

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Permission is one verb on one thing: a resource (with its API group and,
// when the rule names them, one object name) or a non-resource URL.
type Permission struct {
	APIGroup       string
	Resource       string
	ResourceName   string
	NonResourceURL string
	Verb           string
}

func (p Permission) String() string {
	if p.NonResourceURL != "" {
		return p.Verb + " " + p.NonResourceURL
	}
	s := p.Verb + " " + p.Resource
	if p.APIGroup != "" {
		s += "." + p.APIGroup
	}
	if p.ResourceName != "" {
		s += " " + p.ResourceName
	}
	return s
}

// Expand lists what rules grant, one Permission per verb and resource,
// sorted and without duplicates.
func Expand(rules []rbacv1.PolicyRule) []Permission {
	var out []Permission
	for _, r := range rules {
		for _, v := range r.Verbs {
			for _, u := range r.NonResourceURLs {
				out = append(out, Permission{NonResourceURL: u, Verb: v})
			}
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, n := range names {
						out = append(out, Permission{APIGroup: g, Resource: res, ResourceName: n, Verb: v})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Permission) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// Roles returns what each Role and ClusterRole of objs grants, keyed
// "ClusterRole/NAME" or "Role/NAMESPACE/NAME".
func Roles(objs []*unstructured.Unstructured) (map[string][]Permission, error) {
	out := map[string][]Permission{}
	for _, u := range objs {
		switch u.GetKind() {
		case "ClusterRole":
			r, err := Convert[rbacv1.ClusterRole](u)
			if err != nil {
				return nil, err
			}
			out[key(u)] = Expand(r.Rules)
		case "Role":
			r, err := Convert[rbacv1.Role](u)
			if err != nil {
				return nil, err
			}
			out[key(u)] = Expand(r.Rules)
		}
	}
	return out, nil
}

// Bindings returns each RoleBinding and ClusterRoleBinding of objs as
// "ROLEKIND/ROLE -> KIND NAMESPACE/NAME, …", keyed as Roles keys roles.
func Bindings(objs []*unstructured.Unstructured) (map[string]string, error) {
	out := map[string]string{}
	for _, u := range objs {
		var ref rbacv1.RoleRef
		var subjects []rbacv1.Subject
		switch u.GetKind() {
		case "ClusterRoleBinding":
			b, err := Convert[rbacv1.ClusterRoleBinding](u)
			if err != nil {
				return nil, err
			}
			ref, subjects = b.RoleRef, b.Subjects
		case "RoleBinding":
			b, err := Convert[rbacv1.RoleBinding](u)
			if err != nil {
				return nil, err
			}
			ref, subjects = b.RoleRef, b.Subjects
		default:
			continue
		}
		var subs []string
		for _, s := range subjects {
			subs = append(subs, s.Kind+" "+s.Namespace+"/"+s.Name)
		}
		slices.Sort(subs)
		out[key(u)] = ref.Kind + "/" + ref.Name + " -> " + strings.Join(subs, ", ")
	}
	return out, nil
}

// Wildcards names every `*` in the verbs, API groups, resources, resource
// names and non-resource URLs of the RBAC rules of objs, and every
// aggregated ClusterRole (whose rules others decide). Least privilege
// wants none.
func Wildcards(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objs {
		if u.GetKind() != "Role" && u.GetKind() != "ClusterRole" {
			continue
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "aggregationRule"); found {
			out = append(out, key(u)+": aggregationRule (its rules are whatever matching ClusterRoles grant)")
		}
		rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
		for i, r := range rules {
			rule, _ := r.(map[string]any)
			for _, field := range []string{"verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"} {
				values, _, _ := unstructured.NestedStringSlice(rule, field)
				for _, v := range values {
					if strings.Contains(v, "*") {
						out = append(out, fmt.Sprintf("%s: rules[%d].%s holds %q: name each one instead", key(u), i, field, v))
					}
				}
			}
		}
	}
	return out
}

func key(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + "/" + u.GetName()
	}
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}
