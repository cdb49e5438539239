package plan

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// validateClusterConfig checks a clusterConfig step: where the
// ClusterConfig is, and that images and every override are objects (what
// a JSON merge patch into spec must be).
func validateClusterConfig(p *field.Path, c *v1alpha1.ClusterConfigStep) field.ErrorList {
	var errs field.ErrorList
	if c.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(c.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), c.Namespace, msg))
		}
	}
	if c.Name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
		}
	}
	if c.Images == nil && len(c.Overrides) == 0 {
		errs = append(errs, field.Required(p, "images or overrides: what to change in k0s's ClusterConfig"))
	}
	if c.Images != nil && !isObject(c.Images) {
		errs = append(errs, field.Invalid(p.Child("images"), "", "must be an object, as k0s's spec.images: {pause: {image, version}, …}"))
	}
	for i := range c.Overrides {
		if !isObject(&c.Overrides[i]) {
			errs = append(errs, field.Invalid(p.Child("overrides").Index(i), "", "must be an object, merged into the ClusterConfig's spec"))
		}
	}
	return errs
}

func isObject(j *apiextensionsv1.JSON) bool {
	var m map[string]any
	return json.Unmarshal(j.Raw, &m) == nil && m != nil
}

// InstallationStates are the states an installation step may set:
// embedded-cluster's, but for Failed (a rollback's) and the operator's.
var InstallationStates = []string{"Installing", "KubernetesInstalled", "AddonsInstalling", "AddonsInstalled", "Installed"}

// validateInstallation checks an installation step: one of
// embedded-cluster's states, and a spec that is an object.
func validateInstallation(p *field.Path, in *v1alpha1.InstallationStep) field.ErrorList {
	var errs field.ErrorList
	found := false
	for _, s := range InstallationStates {
		found = found || s == in.State
	}
	if !found {
		errs = append(errs, field.NotSupported(p.Child("state"), in.State, InstallationStates))
	}
	if in.Spec != nil && !isObject(in.Spec) {
		errs = append(errs, field.Invalid(p.Child("spec"), "", "must be an object, merged over the newest Installation's spec"))
	}
	return errs
}
