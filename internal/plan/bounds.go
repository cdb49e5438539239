package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The UpgradePlan CRD's bounds (the kubebuilder markers in api/v1alpha1,
// which keep its CEL rules within the API server's cost budget). A plan
// file the CLI runs must also be one the controller could take as a
// resource, so the CLI refuses what the API server would.
// TestBoundsMatchTheCRD reads them back from the generated CRD.
const (
	maxVersionLength       = 128
	maxServiceAccountName  = 253
	maxStages              = 32
	maxStepsPerStage       = 32
	maxGatesPerStage       = 16
	maxNameLength          = 63 // stage and step names, and dependsOn entries
	maxDependsOn           = 32
	maxHelmReleaseLength   = 53
	maxHelmValuesFileCount = 32
	maxHelmValuesFromCount = 32
	maxObjectNameLength    = 253 // configMap, secret and valuesFrom names
	maxDataKeyLength       = 253 // their keys
	maxEnvKeptNames        = 128 // an envKept gate's names
	maxEnvNameLength       = 253 // each of them
)

// validateBounds reports every list and name over the CRD's bounds.
func validateBounds(p *v1alpha1.UpgradePlan) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, tooLong(spec.Child("version"), p.Spec.Version, maxVersionLength)...)
	errs = append(errs, tooLong(spec.Child("serviceAccountName"), p.Spec.ServiceAccountName, maxServiceAccountName)...)
	errs = append(errs, tooMany(spec.Child("stages"), len(p.Spec.Stages), maxStages, "split the upgrade into plans run one after the other")...)
	for i, st := range p.Spec.Stages {
		sp := spec.Child("stages").Index(i)
		errs = append(errs, tooLong(sp.Child("name"), st.Name, maxNameLength)...)
		errs = append(errs, tooMany(sp.Child("steps"), len(st.Steps), maxStepsPerStage, "spread the steps over more stages")...)
		errs = append(errs, tooMany(sp.Child("gates"), len(st.Gates), maxGatesPerStage, "gate on fewer, wider selectors")...)
		for j, g := range st.Gates {
			if e := g.EnvKept; e != nil {
				gp := sp.Child("gates").Index(j).Child("envKept", "names")
				errs = append(errs, tooMany(gp, len(e.Names), maxEnvKeptNames, "leave names out to keep every variable")...)
				for k, n := range e.Names {
					errs = append(errs, tooLong(gp.Index(k), n, maxEnvNameLength)...)
				}
			}
		}
		for j, step := range st.Steps {
			stp := sp.Child("steps").Index(j)
			errs = append(errs, tooLong(stp.Child("name"), step.Name, maxNameLength)...)
			errs = append(errs, tooMany(stp.Child("dependsOn"), len(step.DependsOn), maxDependsOn, "depend on fewer steps")...)
			for k, d := range step.DependsOn {
				errs = append(errs, tooLong(stp.Child("dependsOn").Index(k), d, maxNameLength)...)
			}
			if h := step.Helm; h != nil {
				errs = append(errs, tooLong(stp.Child("helm", "release"), h.Release, maxHelmReleaseLength)...)
				errs = append(errs, tooMany(stp.Child("helm", "valuesFiles"), len(h.ValuesFiles), maxHelmValuesFileCount, "merge values files")...)
				errs = append(errs, tooMany(stp.Child("helm", "valuesFrom"), len(h.ValuesFrom), maxHelmValuesFromCount, "merge values into fewer objects")...)
			}
		}
	}
	return errs
}

func tooLong(path *field.Path, s string, limit int) field.ErrorList {
	if len(s) <= limit {
		return nil
	}
	return field.ErrorList{field.TooLong(path, s, limit)}
}

func tooMany(path *field.Path, n, limit int, fix string) field.ErrorList {
	if n <= limit {
		return nil
	}
	e := field.TooMany(path, n, limit)
	e.Detail = fmt.Sprintf("%s; %s (the UpgradePlan resource allows %d)", e.Detail, fix, limit)
	return field.ErrorList{e}
}
