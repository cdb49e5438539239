package plan

import (
	"slices"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Write is one write a step makes, as admission sees it.
type Write struct {
	Group string
	// Resource is the plural resource name, with its subresource if any
	// (pods/exec).
	Resource string
	// Namespace is the object's; "" for a cluster-scoped object; a
	// Namespace's own name for a Namespace (a namespaceSelector matches
	// a Namespace by its own labels).
	Namespace string
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation string
}

// String is the form messages use: "UPDATE of deployments.apps in
// namespace shop".
func (w Write) String() string {
	r := w.Resource
	if w.Group != "" {
		r += "." + w.Group
	}
	if w.Namespace == "" {
		return w.Operation + " of " + r
	}
	return w.Operation + " of " + r + " in namespace " + w.Namespace
}

// FreezeDenies is the index of the first rule of f that denies w, or -1.
// It matches as the API server matches the policy: a resource rule with
// its wildcards, and a namespaceSelector on the namespaces' names, which
// never leaves out a cluster-scoped object.
func FreezeDenies(f *v1alpha1.FreezeStep, w Write) int {
	if w.Namespace != "" && len(f.Namespaces) > 0 && !slices.Contains(f.Namespaces, w.Namespace) {
		return -1
	}
	for i, r := range f.Rules {
		if slices.Contains(r.Operations, w.Operation) && matchesAny(r.APIGroups, w.Group) && resourceMatches(r.Resources, w.Resource) {
			return i
		}
	}
	return -1
}

func matchesAny(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// resourceMatches is admission's rule: "*" is every resource but no
// subresource, "*/*" everything, "pods/*" every subresource of pods,
// "*/scale" the scale subresource of every resource.
func resourceMatches(rules []string, resource string) bool {
	res, sub, hasSub := strings.Cut(resource, "/")
	for _, r := range rules {
		rres, rsub, rhasSub := strings.Cut(r, "/")
		if rhasSub != hasSub {
			continue
		}
		if (rres == "*" || rres == res) && (!hasSub || rsub == "*" || rsub == sub) {
			return true
		}
	}
	return false
}

// StepWrites are the writes a step makes that the plan names without its
// sources: an image step's workload, a crds step's CRDs, a helm step's
// release records (Secrets in its namespace) and its namespace when it
// creates it. Other kinds' writes depend on their sources or on the
// cluster's resource names; the preflight judges those.
func StepWrites(s v1alpha1.Step) []Write {
	switch {
	case s.Image != nil:
		return []Write{{Group: "apps", Resource: strings.ToLower(s.Image.Kind) + "s", Namespace: s.Image.Namespace, Operation: "UPDATE"}}
	case s.CRDs != nil:
		crds := Write{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}
		return []Write{withOp(crds, "CREATE"), withOp(crds, "UPDATE")}
	case s.Helm != nil:
		records := Write{Resource: "secrets", Namespace: s.Helm.Namespace}
		out := []Write{withOp(records, "CREATE"), withOp(records, "UPDATE"), withOp(records, "DELETE")}
		if s.Helm.CreateNamespace {
			out = append(out, Write{Resource: "namespaces", Namespace: s.Helm.Namespace, Operation: "CREATE"})
		}
		return out
	case s.HelmUninstall != nil:
		// The uninstall updates its records; its rollback creates one.
		records := Write{Resource: "secrets", Namespace: s.HelmUninstall.Namespace}
		return []Write{withOp(records, "CREATE"), withOp(records, "UPDATE")}
	}
	return nil
}

func withOp(w Write, op string) Write {
	w.Operation = op
	return w
}
