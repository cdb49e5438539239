package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// validateRecreate checks a recreate step.
func validateRecreate(path *field.Path, r *v1alpha1.RecreateStep, base string) field.ErrorList {
	var errs field.ErrorList
	if r.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), "e.g. apps/v1"))
	}
	if r.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "e.g. Deployment"))
	}
	if r.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "a namespace or a pattern such as tenant-*"))
	}
	errs = append(errs, validSelector(path.Child("selector"), r.Selector)...)
	switch r.Mode {
	case "", "delete", "annotate":
	default:
		errs = append(errs, field.NotSupported(path.Child("mode"), r.Mode, []string{"delete", "annotate"}))
	}
	if r.From != nil {
		errs = append(errs, validateSource(path.Child("from"), *r.From, base)...)
	}
	return errs
}
