package preflight

import (
	"context"

	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
)

// stepAt is a step of the plan by position.
type stepAt struct{ stage, index int }

// stepWrite is one write a step needs, as admission sees it.
type stepWrite struct {
	at stepAt
	w  plan.Write
}

// admissionOperation is the admission operation of a write verb: a
// server-side apply is a patch, which admission sees as an UPDATE (or a
// CREATE, which a step that applies also needs "create" for).
var admissionOperation = map[string]string{"create": "CREATE", "patch": "UPDATE", "update": "UPDATE", "delete": "DELETE"}

// freeze checks a freeze step: the cluster serves admission policies
// (Kubernetes 1.30 or newer), the credentials may write and delete them
// (the lift at the run's end deletes them as the plan acts), and every
// resource a rule names is served (or defined by a CRD of the plan): a
// misspelt name would freeze nothing, silently.
func (pf *preflight) freeze(ctx context.Context, p *field.Path, f *v1alpha1.FreezeStep) {
	what := p.String() + " (its ValidatingAdmissionPolicy and binding)"
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		gvk := admissionv1.SchemeGroupVersion.WithKind(kind)
		m, err := pf.d.Clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case meta.IsNoMatchError(err):
			pf.errs = append(pf.errs, field.Invalid(p, kind, "the cluster does not serve "+admissionv1.SchemeGroupVersion.String()+" "+kind+": a freeze needs Kubernetes 1.30 or newer"))
			return
		case err != nil:
			pf.errs = append(pf.errs, field.InternalError(p, fmt.Errorf("map %s: %w", gvk, err)))
			return
		}
		for _, verb := range []string{"get", "create", "patch", "delete"} {
			pf.need(verb, m.Resource, "", what)
		}
	}
	for i, r := range f.Rules {
		for k, res := range r.Resources {
			base, _, _ := strings.Cut(res, "/")
			if base == "*" {
				continue
			}
			for _, g := range r.APIGroups {
				if ok, err := pf.resourceServed(g, base); err != nil {
					pf.errs = append(pf.errs, field.InternalError(p.Child("rules").Index(i).Child("resources").Index(k), err))
				} else if !ok {
					pf.errs = append(pf.errs, field.Invalid(p.Child("rules").Index(i).Child("resources").Index(k), res,
						fmt.Sprintf("the cluster serves no resource %s in API group %q and no CRD of the plan defines it, so the rule would deny nothing: write the plural name `kubectl api-resources` shows", base, g)))
				}
			}
		}
	}
}

// resourceServed tells whether a resource of the group ("*": any) is served, or
// defined by a CRD of the plan.
func (pf *preflight) resourceServed(group, resource string) (bool, error) {
	for gk, pk := range pf.planned {
		if pk.resource == resource && (group == "*" || gk.Group == group) {
			return true, nil
		}
	}
	partial := schema.GroupVersionResource{Resource: resource}
	if group != "*" {
		// An empty group matches any group here; the core group's
		// resources are served in it, and a name also served in another
		// group passes: lenient, never a false refusal.
		partial.Group = group
	}
	_, err := pf.d.Clients.Mapper.ResourcesFor(partial)
	if meta.IsNoMatchError(err) {
		pf.d.Clients.Mapper.Reset()
		_, err = pf.d.Clients.Mapper.ResourcesFor(partial)
	}
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// freezeReach refuses a freeze that denies a write of a step of its own
// stage or a later one (see plan.FreezeReach), judged with the
// cluster's resource names and the plan's sources.
func (pf *preflight) freezeReach() {
	stages := pf.p.Plan.Spec.Stages
	for i, st := range stages {
		for j, s := range st.Steps {
			if s.Freeze == nil {
				continue
			}
			path := field.NewPath("spec").Child("stages").Index(i).Child("steps").Index(j).Child("freeze")
			byStep := map[stepAt][]plan.Write{}
			var order []stepAt
			for _, w := range pf.writes {
				if w.at.stage < i || w.at == (stepAt{i, j}) {
					continue
				}
				if _, seen := byStep[w.at]; !seen {
					order = append(order, w.at)
				}
				byStep[w.at] = append(byStep[w.at], w.w)
			}
			for _, at := range order {
				other := stages[at.stage]
				pf.errs = append(pf.errs, plan.FreezeReach(path, s.Freeze, other.Steps[at.index].Name, other.Name, byStep[at])...)
			}
		}
	}
}
