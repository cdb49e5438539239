package plan

import (
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// validateDistribute checks a distribute step: what its Jobs run, where
// they mount, and the names of what they read, each as Kubernetes would
// refuse it when the Jobs are created, but before anything is.
func validateDistribute(p *field.Path, d *v1alpha1.DistributeStep) field.ErrorList {
	var errs field.ErrorList
	if d.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(d.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), d.Namespace, msg))
		}
	}
	if d.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), "the image that copies the artifacts onto each node (embedded-cluster's local-artifact-mirror)"))
	}
	if len(d.Command) == 0 {
		errs = append(errs, field.Required(p.Child("command"), `what the container runs, e.g. [/bin/sh, -ec, "local-artifact-mirror pull binaries …"]`))
	}
	for _, dir := range []struct{ name, value string }{{"hostPath", d.HostPath}, {"mountPath", d.MountPath}} {
		if dir.value != "" && (!path.IsAbs(dir.value) || path.Clean(dir.value) != dir.value) {
			errs = append(errs, field.Invalid(p.Child(dir.name), dir.value, "must be a clean absolute path, e.g. /var/lib/embedded-cluster"))
		}
	}
	seen := map[string]bool{}
	for i, e := range d.Env {
		errs = append(errs, envName(p.Child("env").Index(i).Child("name"), e.Name, seen)...)
	}
	for i, e := range d.SecretEnv {
		ep := p.Child("secretEnv").Index(i)
		errs = append(errs, envName(ep.Child("name"), e.Name, seen)...)
		for _, msg := range validation.IsDNS1123Subdomain(e.Secret) {
			errs = append(errs, field.Invalid(ep.Child("secret"), e.Secret, msg+" (a Secret of the Jobs' namespace)"))
		}
		for _, msg := range validation.IsConfigMapKey(e.Key) {
			errs = append(errs, field.Invalid(ep.Child("key"), e.Key, msg))
		}
	}
	names := make([]string, 0, len(d.Artifacts))
	for name := range d.Artifacts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d.Artifacts[name] == "" {
			errs = append(errs, field.Required(p.Child("artifacts").Key(name), "where the artifact is: a URL, or a registry reference when airgap"))
		}
	}
	return errs
}

// envName refuses a name a container cannot have, or one set twice.
func envName(p *field.Path, name string, seen map[string]bool) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsEnvVarName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	switch name {
	case "ARTIFACTS", "INSTALLATION":
		errs = append(errs, field.Invalid(p, name, "the step sets it itself (from artifacts and installation)"))
	}
	if seen[name] {
		errs = append(errs, field.Duplicate(p, name))
	}
	seen[name] = true
	return errs
}
