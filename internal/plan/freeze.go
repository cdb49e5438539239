package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// FreezeOperations are the admission operations a freeze may deny.
var FreezeOperations = []string{"CREATE", "UPDATE", "DELETE", "CONNECT"}

// validateFreeze checks a freeze step as the API server would check its
// ValidatingAdmissionPolicy, so a plan that passes never fails there.
func validateFreeze(path *field.Path, f *v1alpha1.FreezeStep) field.ErrorList {
	var errs field.ErrorList
	if len(f.Rules) == 0 {
		errs = append(errs, field.Required(path.Child("rules"), `at least one rule, e.g. {apiGroups: [liqo.io], resources: [foreignclusters], operations: [CREATE]}`))
	}
	for i, r := range f.Rules {
		errs = append(errs, validateFreezeRule(path.Child("rules").Index(i), r)...)
	}
	for i, ns := range f.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("namespaces").Index(i), ns, "a namespace name: "+strings.Join(msgs, "; ")))
		}
	}
	switch {
	case strings.ContainsAny(f.Message, "\r\n"):
		errs = append(errs, field.Invalid(path.Child("message"), "(multi-line)", "write the message on one line: the API server refuses line breaks in it"))
	case f.Message != "" && strings.TrimSpace(f.Message) == "":
		errs = append(errs, field.Invalid(path.Child("message"), f.Message, "write a message, or leave it out for the default one"))
	}
	return errs
}

func validateFreezeRule(path *field.Path, r v1alpha1.FreezeRule) field.ErrorList {
	var errs field.ErrorList
	groups := path.Child("apiGroups")
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(groups, `the resources' API groups: "" for the core group (configmaps, secrets), e.g. liqo.io, or "*"`))
	}
	for i, g := range r.APIGroups {
		switch {
		case g == "*" && len(r.APIGroups) > 1:
			errs = append(errs, field.Invalid(groups.Index(i), g, `"*" already means every group: list it alone`))
		case g == "admissionregistration.k8s.io":
			errs = append(errs, field.Invalid(groups.Index(i), g, "the API server never applies admission policies to admission configuration, so this would deny nothing: leave the group out"))
		case g == "" || g == "*":
		case len(validation.IsDNS1123Subdomain(g)) > 0:
			errs = append(errs, field.Invalid(groups.Index(i), g, `an API group such as apps or liqo.io ("" for the core group), without a version`))
		}
	}
	res := path.Child("resources")
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(res, "plural resource names, e.g. configmaps or foreignclusters"))
	}
	for i, name := range r.Resources {
		if (name == "*" || name == "*/*") && len(r.Resources) > 1 {
			errs = append(errs, field.Invalid(res.Index(i), name, name+" already means every resource of the groups: list it alone"))
			continue
		}
		if !validResourceName(name) {
			errs = append(errs, field.Invalid(res.Index(i), name, "a plural resource name in lower case as the API serves it (configmaps, not ConfigMap), \"*\", or a subresource such as pods/exec"))
		}
	}
	ops := path.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(ops, "the operations to deny: "+strings.Join(FreezeOperations, ", ")))
	}
	for i, op := range r.Operations {
		if !isFreezeOperation(op) {
			errs = append(errs, field.NotSupported(ops.Index(i), op, FreezeOperations))
		}
	}
	return errs
}

func isFreezeOperation(op string) bool {
	for _, o := range FreezeOperations {
		if op == o {
			return true
		}
	}
	return false
}

// validResourceName: res, res/sub, with "*" for either part.
func validResourceName(name string) bool {
	res, sub, hasSub := strings.Cut(name, "/")
	part := func(p string) bool {
		return p == "*" || (p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789-.") == "" && p == strings.Trim(p, "-."))
	}
	return part(res) && (!hasSub || part(sub))
}

// validateFreezeReach refuses a freeze that denies what a step of its own
// stage, or of a later one, writes: the run would deny itself that step,
// or the restore of that step's objects in a rollback (a stage is
// restored while the freezes of earlier stages still hold). Only the
// writes a plan names without its sources and without a cluster are
// judged here (image workloads, CRDs, Helm's release records); the
// preflight judges every write against the cluster's resource names.
func validateFreezeReach(spec *field.Path, p v1alpha1.UpgradePlanSpec) field.ErrorList {
	var errs field.ErrorList
	for i, st := range p.Stages {
		for j, s := range st.Steps {
			if s.Freeze == nil {
				continue
			}
			path := spec.Child("stages").Index(i).Child("steps").Index(j).Child("freeze")
			for k := i; k < len(p.Stages); k++ {
				for l, other := range p.Stages[k].Steps {
					if k == i && l == j {
						continue
					}
					errs = append(errs, FreezeReach(path, s.Freeze, other.Name, p.Stages[k].Name, StepWrites(other))...)
				}
			}
		}
	}
	return errs
}

// FreezeReach is one error per rule of the freeze at path that denies one
// of the writes of step (in stage), naming the step and the fix.
func FreezeReach(path *field.Path, f *v1alpha1.FreezeStep, step, stage string, writes []Write) field.ErrorList {
	var errs field.ErrorList
	reported := map[int]bool{}
	for _, w := range writes {
		rule := FreezeDenies(f, w)
		if rule < 0 || reported[rule] {
			continue
		}
		reported[rule] = true
		errs = append(errs, field.Forbidden(path.Child("rules").Index(rule), fmt.Sprintf(
			"denies %s, which step %s (stage %s) does: the run would deny itself that step, or its rollback; narrow the rule or set namespaces so it leaves that out, or freeze in a stage after that step's",
			w, step, stage)))
	}
	return errs
}
