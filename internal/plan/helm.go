package plan

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// maxReleaseName is Helm's limit: release names end up in labels and
// Secret names with a suffix.
const maxReleaseName = 53

// validateHelm checks a helm step: a release name Helm accepts, a
// namespace, a chart it can fetch, and values that are an object.
func validateHelm(path *field.Path, h *v1alpha1.HelmStep, base string) field.ErrorList {
	errs := validateRelease(path, h.Release, h.Namespace)
	errs = append(errs, validateChart(path, h, base)...)
	if h.Values != nil {
		var m map[string]any
		if err := json.Unmarshal(h.Values.Raw, &m); err != nil {
			// The value itself is never quoted: it may hold secrets.
			errs = append(errs, field.Invalid(path.Child("values"), redact.Hidden, "values must be a map of keys to values, as in values.yaml"))
		}
	}
	errs = append(errs, validateValuesFrom(path.Child("valuesFrom"), h.ValuesFrom)...)
	for i, f := range h.ValuesFiles {
		if _, err := os.Stat(resolve(base, f)); err != nil {
			errs = append(errs, field.Invalid(path.Child("valuesFiles").Index(i), f, fmt.Sprintf("cannot read it (%v); paths are relative to the plan file", err)))
		}
	}
	return errs
}

// validateRelease checks a release's name and namespace.
func validateRelease(path *field.Path, release, namespace string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case release == "":
		errs = append(errs, field.Required(path.Child("release"), "the Helm release name, e.g. demo-addon"))
	case len(release) > maxReleaseName || len(validation.IsDNS1123Label(release)) > 0:
		errs = append(errs, field.Invalid(path.Child("release"), release, fmt.Sprintf("a release name is lowercase letters, digits and '-', at most %d characters", maxReleaseName)))
	}
	if namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "the release's namespace"))
	} else if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("namespace"), namespace, strings.Join(msgs, "; ")))
	}
	return errs
}

func validateChart(path *field.Path, h *v1alpha1.HelmStep, base string) field.ErrorList {
	p := path.Child("chart")
	switch {
	case h.Chart == "":
		return field.ErrorList{field.Required(p, "a chart directory or .tgz (relative to the plan file), an https:// archive URL, an oci:// reference, or a chart name with repo")}
	case h.Repo != "":
		if u, err := url.Parse(h.Repo); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return field.ErrorList{field.Invalid(path.Child("repo"), redact.URL(h.Repo), "must be the http(s) URL of a chart repository (the directory holding index.yaml)")}
		}
		if strings.Contains(h.Chart, "/") {
			return field.ErrorList{field.Invalid(p, h.Chart, "with repo, chart is the chart's name in the repository (no slashes)")}
		}
	case strings.HasPrefix(h.Chart, "oci://"):
		if h.Version == "" {
			return field.ErrorList{field.Required(path.Child("version"), "an oci:// chart needs its version (the tag to pull)")}
		}
	case strings.HasPrefix(h.Chart, "https://"), strings.HasPrefix(h.Chart, "http://"):
		if u, err := url.Parse(h.Chart); err != nil || u.Host == "" {
			return field.ErrorList{field.Invalid(p, redact.Chart(h.Chart), "must be an absolute URL of a chart archive")}
		}
	default:
		if _, err := os.Stat(resolve(base, h.Chart)); err != nil {
			return field.ErrorList{field.Invalid(p, h.Chart, fmt.Sprintf("cannot read it (%v); paths are relative to the plan file", err))}
		}
		if h.Version != "" {
			return field.ErrorList{field.Forbidden(path.Child("version"), "a local chart has the version its Chart.yaml says: remove version")}
		}
	}
	return nil
}
