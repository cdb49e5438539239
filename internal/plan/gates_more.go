package plan

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func validatePodsRunningGate(path *field.Path, g *v1alpha1.PodsRunningGate) field.ErrorList {
	var errs field.ErrorList
	if g.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "the pods' namespace"))
	}
	if g.Selector == "" {
		errs = append(errs, field.Required(path.Child("selector"), "which pods, e.g. app=web"))
	}
	errs = append(errs, validSelector(path.Child("selector"), g.Selector)...)
	if g.MaxRestarts != nil && *g.MaxRestarts < 0 {
		errs = append(errs, field.Invalid(path.Child("maxRestarts"), *g.MaxRestarts, "must not be negative"))
	}
	return errs
}

func validatePVCsBoundGate(path *field.Path, g *v1alpha1.PVCsBoundGate) field.ErrorList {
	var errs field.ErrorList
	if g.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "the claims' namespace"))
	}
	return append(errs, validSelector(path.Child("selector"), g.Selector)...)
}

func validateNodesReadyGate(path *field.Path, g *v1alpha1.NodesReadyGate) field.ErrorList {
	errs := validSelector(path.Child("selector"), g.Selector)
	if g.MinReady != nil && *g.MinReady < 1 {
		errs = append(errs, field.Invalid(path.Child("minReady"), *g.MinReady, "must be at least 1, or left out to require every matching node"))
	}
	return errs
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
