package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
)

// ValidateInCluster validates a plan the controller runs from an
// UpgradePlan resource. Such a plan has no directory: a source must be
// inline, a URL, a ConfigMap or a Secret, a chart a repository, URL or OCI
// reference, values inline or from ConfigMaps and Secrets (valuesFrom),
// and no file may be named (a path, a caFile, a local chart,
// valuesFiles). Every other rule is Validate's.
func ValidateInCluster(p *v1alpha1.UpgradePlan) field.ErrorList {
	if errs := fileReferences(p); len(errs) > 0 {
		return errs
	}
	return Validate(&Loaded{Plan: p})
}

const noFiles = "a plan without a directory (an UpgradePlan resource, a plan of a URL or ConfigMap catalog) cannot read files"

func fileReferences(p *v1alpha1.UpgradePlan) field.ErrorList {
	var errs field.ErrorList
	source := func(path *field.Path, s *v1alpha1.Source) {
		if s == nil {
			return
		}
		if s.Path != "" {
			errs = append(errs, field.Forbidden(path.Child("path"), noFiles+": put the objects in inline, a configMap or secret, or serve them at a url"))
		}
		if s.CAFile != "" {
			errs = append(errs, field.Forbidden(path.Child("caFile"), noFiles+": serve the URL with a certificate the controller trusts"))
		}
	}
	for i, st := range p.Spec.Stages {
		for j, s := range st.Steps {
			path := field.NewPath("spec", "stages").Index(i).Child("steps").Index(j)
			switch {
			case s.CRDs != nil:
				source(path.Child("crds"), &s.CRDs.Source)
			case s.Manifests != nil:
				source(path.Child("manifests"), &s.Manifests.Source)
			case s.Job != nil:
				source(path.Child("job"), &s.Job.Source)
				source(path.Child("job", "rollbackJob"), s.Job.RollbackJob)
			case s.Recreate != nil:
				source(path.Child("recreate", "from"), s.Recreate.From)
			case s.Helm != nil:
				h := s.Helm
				if helmx.LocalChart(h.Chart, h.Repo) {
					errs = append(errs, field.Forbidden(path.Child("helm", "chart"), noFiles+": name the chart with repo, or give an https:// archive URL or an oci:// reference"))
				}
				for k := range h.ValuesFiles {
					errs = append(errs, field.Forbidden(path.Child("helm", "valuesFiles").Index(k), noFiles+": put the values in helm.values or helm.valuesFrom"))
				}
			}
		}
	}
	return errs
}
