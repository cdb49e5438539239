package plan

import (
	"path"
	"strings"

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
	switch {
	case r.Namespace == "":
		errs = append(errs, field.Required(path.Child("namespace"), "a namespace or a pattern such as tenant-*"))
	case !validPattern(r.Namespace):
		errs = append(errs, field.Invalid(path.Child("namespace"), r.Namespace, "use a namespace name, or a pattern where * stands for any characters (tenant-*)"))
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

// validPattern: a namespace name with * wildcards (path.Match syntax
// without its character classes and escapes, which namespaces never need).
func validPattern(p string) bool {
	if strings.ContainsAny(p, "[]\\?") {
		return false
	}
	_, err := path.Match(p, "")
	return err == nil && strings.Trim(strings.ReplaceAll(p, "*", "a"), "abcdefghijklmnopqrstuvwxyz0123456789-.") == ""
}
