package plan

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// sourcesSet counts the kinds of source src sets (an empty string is
// unset, as in the CRD's rule).
func sourcesSet(src v1alpha1.Source) int {
	n := 0
	for _, set := range []bool{src.Path != "", src.URL != "", src.Inline != "", src.ConfigMap != nil, src.Secret != nil} {
		if set {
			n++
		}
	}
	return n
}

// validateKeyRef checks a configMap or secret source: a name the API
// server accepts and, when set, a key a ConfigMap or Secret may have.
func validateKeyRef(path *field.Path, ref *v1alpha1.ObjectKeyRef) field.ErrorList {
	errs := validateObjectName(path.Child("name"), ref.Name)
	return append(errs, validateDataKey(path.Child("key"), ref.Key)...)
}

// validateValuesFrom checks a helm step's valuesFrom, as the CRD does.
func validateValuesFrom(path *field.Path, refs []v1alpha1.ValuesReference) field.ErrorList {
	var errs field.ErrorList
	for i, r := range refs {
		p := path.Index(i)
		if r.Kind != "ConfigMap" && r.Kind != "Secret" {
			errs = append(errs, field.NotSupported(p.Child("kind"), r.Kind, []string{"ConfigMap", "Secret"}))
		}
		errs = append(errs, validateObjectName(p.Child("name"), r.Name)...)
		errs = append(errs, validateDataKey(p.Child("valuesKey"), r.ValuesKey)...)
	}
	return errs
}

func validateObjectName(path *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "the name of the object, in the plan's namespace")}
	}
	if len(name) > maxObjectNameLength {
		return field.ErrorList{field.TooLong(path, name, maxObjectNameLength)}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, name, strings.Join(msgs, "; "))}
	}
	return nil
}

// validateDataKey: empty is unset (every key, or the default).
func validateDataKey(path *field.Path, key string) field.ErrorList {
	if key == "" {
		return nil
	}
	if len(key) > maxDataKeyLength {
		return field.ErrorList{field.TooLong(path, key, maxDataKeyLength)}
	}
	if msgs := validation.IsConfigMapKey(key); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, key, strings.Join(msgs, "; "))}
	}
	return nil
}
