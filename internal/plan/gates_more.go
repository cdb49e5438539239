package plan

import (
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func validatePodsRunningGate(path *field.Path, g *v1alpha1.PodsRunningGate) field.ErrorList {
	errs := validNamespace(path.Child("namespace"), g.Namespace, "the pods' namespace")
	if g.Selector == "" {
		// Every pod of a namespace is rarely what a gate means, and an
		// empty selector is more often forgotten than chosen.
		errs = append(errs, field.Required(path.Child("selector"), "which pods, e.g. app=web"))
	}
	errs = append(errs, validSelector(path.Child("selector"), g.Selector)...)
	if g.MaxRestarts != nil && *g.MaxRestarts < 0 {
		errs = append(errs, field.Invalid(path.Child("maxRestarts"), *g.MaxRestarts, "must not be negative"))
	}
	return errs
}

func validatePVCsBoundGate(path *field.Path, g *v1alpha1.PVCsBoundGate) field.ErrorList {
	errs := validNamespace(path.Child("namespace"), g.Namespace, "the claims' namespace")
	return append(errs, validSelector(path.Child("selector"), g.Selector)...)
}

func validateNodesReadyGate(path *field.Path, g *v1alpha1.NodesReadyGate) field.ErrorList {
	errs := validSelector(path.Child("selector"), g.Selector)
	if g.MinReady != nil && *g.MinReady < 1 {
		errs = append(errs, field.Invalid(path.Child("minReady"), *g.MinReady, "must be at least 1, or left out to require every matching node"))
	}
	return errs
}

// validNamespace requires a namespace name the API server accepts: a
// malformed one would only show up, at run time, as a gate matching nothing.
func validNamespace(path *field.Path, ns, what string) field.ErrorList {
	if ns == "" {
		return field.ErrorList{field.Required(path, what)}
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, ns, "not a namespace name: "+strings.Join(msgs, "; "))}
	}
	return nil
}

func validSelector(path *field.Path, sel string) field.ErrorList {
	if sel == "" {
		return nil
	}
	if _, err := labels.Parse(sel); err != nil {
		return field.ErrorList{field.Invalid(path, sel, err.Error()+"; "+selectorHint)}
	}
	return nil
}
