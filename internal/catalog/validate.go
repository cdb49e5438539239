package catalog

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/versions"
)

// Validate checks a catalog before anything reads a cluster: every
// problem at once, each with its field path and the fix.
func Validate(c *ReleaseCatalog) field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != v1alpha1.GroupVersion.String() || c.Kind != Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), c.APIVersion+"/"+c.Kind,
			fmt.Sprintf("a catalog is apiVersion: %s, kind: %s", v1alpha1.GroupVersion, Kind)))
	}
	spec := field.NewPath("spec")
	if len(c.Spec.Releases) == 0 {
		errs = append(errs, field.Required(spec.Child("releases"), "list the platform's versions, each with its plan"))
	}
	seen := map[string]int{}
	for i, r := range c.Spec.Releases {
		path := spec.Child("releases").Index(i)
		v, err := semver.NewVersion(r.Version)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("version"), r.Version, "not a semantic version: write it as 1.2.3 or v1.2.3"))
		} else if j, dup := seen[v.String()]; dup {
			errs = append(errs, field.Duplicate(path.Child("version"), fmt.Sprintf("%s (the same version as spec.releases[%d]): list each version once", r.Version, j)))
		} else {
			seen[v.String()] = i
		}
		if r.Plan == "" && c.Spec.PlanTemplate == "" {
			errs = append(errs, field.Required(path.Child("plan"), "name the release's UpgradePlan file, or give the catalog a spec.planTemplate"))
		}
		errs = append(errs, constraint(path.Child("kubernetes"), r.Kubernetes)...)
		errs = append(errs, constraint(path.Child("peers"), r.Peers)...)
		errs = append(errs, constraint(path.Child("allowFrom"), r.AllowFrom)...)
		if k := r.InstallsKubernetes; k != "" {
			if v, err := versions.Kubernetes(k); err != nil || v.Major() != 1 {
				errs = append(errs, field.Invalid(path.Child("installsKubernetes"), k, "not a Kubernetes version: write the version the release installs as 1.32 or 1.32.4"))
			}
		}
	}
	for i, d := range c.Spec.Detect {
		errs = append(errs, validateSource(spec.Child("detect").Index(i), d)...)
	}
	if p := c.Spec.Peers; p != nil {
		path := spec.Child("peers")
		ks := path.Child("kubeconfigSecrets")
		if p.KubeconfigSecrets.Namespace == "" {
			errs = append(errs, field.Required(ks.Child("namespace"), "the namespace of the Secrets holding the peers' kubeconfigs"))
		}
		if s := p.KubeconfigSecrets.Selector; s != "" {
			if _, err := labels.Parse(s); err != nil {
				errs = append(errs, field.Invalid(ks.Child("selector"), s, fmt.Sprintf("not a label selector (%v): write it as key=value", err)))
			}
		}
		for i, d := range p.Detect {
			errs = append(errs, validateSource(path.Child("detect").Index(i), d)...)
		}
		if len(p.Detect) == 0 && len(c.Spec.Detect) == 0 {
			errs = append(errs, field.Required(path.Child("detect"), "say how a peer's version is read (or give the catalog a spec.detect, which peers then use)"))
		}
		if e := p.Expected; e != nil {
			errs = append(errs, validateExpected(path.Child("expected"), e)...)
		}
	}
	errs = append(errs, validateValuesFrom(spec.Child("valuesFrom"), c)...)
	if m := c.Spec.Compatibility; m != nil {
		cm := spec.Child("compatibility", "configMap")
		for _, f := range []struct{ name, v string }{{"namespace", m.ConfigMap.Namespace}, {"name", m.ConfigMap.Name}, {"key", m.ConfigMap.Key}} {
			if f.v == "" {
				errs = append(errs, field.Required(cm.Child(f.name), "the matrix ConfigMap's "+f.name))
			}
		}
	}
	return errs
}

func constraint(path *field.Path, s string) field.ErrorList {
	if s == "" {
		return nil
	}
	if _, err := semver.NewConstraint(s); err != nil {
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("not a version range (%v): write it as \">= 1.29, < 1.35\" or \"1.1.x || 1.2.x\"", err))}
	}
	return nil
}

func validateSource(path *field.Path, d VersionSource) field.ErrorList {
	var errs field.ErrorList
	set := 0
	required := func(p *field.Path, v, what string) {
		if v == "" {
			errs = append(errs, field.Required(p, what))
		}
	}
	if c := d.ConfigMap; c != nil {
		set++
		p := path.Child("configMap")
		required(p.Child("namespace"), c.Namespace, "the ConfigMap's namespace")
		required(p.Child("name"), c.Name, "the ConfigMap's name")
		required(p.Child("key"), c.Key, "the key whose value is the version")
	}
	if im := d.Image; im != nil {
		set++
		p := path.Child("image")
		switch im.Kind {
		case "Deployment", "StatefulSet", "DaemonSet":
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), im.Kind, []string{"Deployment", "StatefulSet", "DaemonSet"}))
		}
		required(p.Child("namespace"), im.Namespace, "the workload's namespace")
		required(p.Child("name"), im.Name, "the workload's name")
	}
	if h := d.Helm; h != nil {
		set++
		p := path.Child("helm")
		required(p.Child("namespace"), h.Namespace, "the release's namespace")
		required(p.Child("release"), h.Release, "the Helm release's name")
		if h.Field != "" && h.Field != HelmChartVersion && h.Field != HelmAppVersion {
			errs = append(errs, field.NotSupported(p.Child("field"), h.Field, []string{HelmChartVersion, HelmAppVersion}))
		}
	}
	if l := d.Label; l != nil {
		set++
		p := path.Child("label")
		required(p.Child("apiVersion"), l.APIVersion, "the object's apiVersion, e.g. apps/v1")
		required(p.Child("kind"), l.Kind, "the object's kind")
		required(p.Child("name"), l.Name, "the object's name")
		required(p.Child("key"), l.Key, "the label whose value is the version")
	}
	if d.Installation != nil {
		set++
	}
	if set != 1 {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("%d sources", set), "set exactly one of configMap, image, helm, label, installation"))
	}
	return errs
}
