package engine

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/object"
)

// maxRunName is the longest name of an UpgradeRun (a DNS subdomain).
const maxRunName = 253

// RunName is the name of a plan's run: the plan's name when it names no
// namespace (a plan file applied with the CLI), else
// <namespace>.<name>. Runs of every namespace live in the one runs
// namespace, so the plan's namespace is part of the key: tenant B's plan
// web never finds, approves or resumes tenant A's. A namespace is a DNS
// label (no dot), so the first dot parts the two; a name too long for a
// DNS subdomain ends in a hash of the whole key.
func RunName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return object.Shorten(namespace+"."+name, maxRunName)
}

// RunOf is the name of plan p's run (RunName).
func RunOf(p *v1alpha1.UpgradePlan) string { return RunName(p.Namespace, p.Name) }

// OwnedBy tells whether run r belongs to owner. Runs are keyed by the
// plan's namespace, so only a run of the owner's namespace can be its;
// within it, a run records the kind and name of what started it. A run
// without an owner (the CLI's, the wizard's) belongs to no resource; a
// plan re-created under its name (a new UID) keeps its run: the
// namespace's own RBAC decides who may create plans there.
func OwnedBy(r *v1alpha1.UpgradeRun, owner *v1alpha1.RunOwner) bool {
	o := r.Spec.Owner
	if o == nil || owner == nil {
		return o == nil && owner == nil
	}
	return o.Kind == owner.Kind && o.Namespace == owner.Namespace && o.Name == owner.Name
}

// FindRun is the run a command names: NAME with the plan's namespace
// (-n), or NAME alone. Alone, it is a run of that name, else the one run
// of a plan of that name in any namespace; plans of that name in several
// namespaces make an error that asks for the namespace. "" with a nil
// error: no such run (the caller says so).
func FindRun(runs []v1alpha1.UpgradeRun, namespace, name string) (string, error) {
	if namespace != "" {
		return RunName(namespace, name), nil
	}
	var found, namespaces []string
	for i := range runs {
		r := &runs[i]
		if r.Name == name {
			return name, nil
		}
		if ns := r.Spec.PlanNamespace; ns != "" && r.Name == RunName(ns, name) {
			found, namespaces = append(found, r.Name), append(namespaces, ns)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	sort.Strings(namespaces)
	return "", fmt.Errorf("plans named %q in namespaces %s each have a run: name the plan's namespace with -n NAMESPACE", name, strings.Join(namespaces, ", "))
}

// PlanMeta is the name and namespace of the plan run r runs, such that
// RunName gives r's name back: what a resume, a retry or a rollback
// rebuilds the plan under.
func PlanMeta(r *v1alpha1.UpgradeRun) metav1.ObjectMeta {
	ns := r.Spec.PlanNamespace
	return metav1.ObjectMeta{Name: strings.TrimPrefix(r.Name, ns+"."), Namespace: ns}
}
