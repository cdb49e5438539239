package plan

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/window"
)

// Validate checks a loaded plan without a cluster and returns every problem.
func Validate(l *Loaded) field.ErrorList {
	p := l.Plan
	var errs field.ErrorList
	if p.APIVersion != v1alpha1.APIVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), p.APIVersion, "must be "+v1alpha1.APIVersion))
	}
	if p.Kind != v1alpha1.PlanKind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), p.Kind, "must be "+v1alpha1.PlanKind))
	}
	if msgs := validation.IsDNS1123Subdomain(p.Name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), p.Name, "a plan needs a name (lowercase letters, digits, '-' and '.'): it keys the run"))
	}
	errs = append(errs, validateBounds(p)...)
	spec := field.NewPath("spec")
	if p.Spec.Version == "" {
		errs = append(errs, field.Required(spec.Child("version"), "the target version this plan reaches"))
	}
	if len(p.Spec.Stages) == 0 {
		errs = append(errs, field.Required(spec.Child("stages"), "at least one stage is required"))
	}
	for i, g := range p.Spec.Checks {
		cp := spec.Child("checks").Index(i)
		if g.Soak != nil {
			errs = append(errs, field.Forbidden(cp.Child("soak"), "a soak is not a check: put it in a stage's gates"))
			continue
		}
		if g.EnvKept != nil {
			errs = append(errs, field.Forbidden(cp.Child("envKept"), "an envKept gate compares with a stage's backup, which a check has none of: put it in the gates of the stage that changes the workload"))
			continue
		}
		errs = append(errs, validateGate(cp, g)...)
	}
	stageNames := map[string]bool{}
	stepNames := map[string]string{}
	for i, st := range p.Spec.Stages {
		sp := spec.Child("stages").Index(i)
		errs = append(errs, uniqueName(sp.Child("name"), st.Name, stageNames, "stage")...)
		if len(st.Steps) == 0 {
			errs = append(errs, field.Required(sp.Child("steps"), "at least one step is required"))
		}
		for j, step := range st.Steps {
			stp := sp.Child("steps").Index(j)
			if step.Name == "" {
				errs = append(errs, field.Required(stp.Child("name"), "every step needs a name, unique across the plan"))
			} else if prev, dup := stepNames[step.Name]; dup {
				e := field.Duplicate(stp.Child("name"), step.Name+" (also "+prev+")")
				e.Detail = "give each step its own name, unique across the plan"
				errs = append(errs, e)
			} else {
				stepNames[step.Name] = stp.String()
			}
			errs = append(errs, positive(stp.Child("timeout"), step.Timeout)...)
			errs = append(errs, validateStepKind(stp, step, l.BaseDir)...)
		}
		errs = append(errs, validateDependsOn(sp, st)...)
		for j, g := range st.Gates {
			errs = append(errs, validateGate(sp.Child("gates").Index(j), g)...)
		}
		errs = append(errs, validateEnvKeptStage(sp, st)...)
	}
	errs = append(errs, validateFreezeReach(spec, p.Spec)...)
	_, werrs := window.ParseAll(p.Spec.Windows, spec.Child("windows"))
	return append(errs, werrs...)
}

func uniqueName(path *field.Path, name string, seen map[string]bool, what string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "every "+what+" needs a name")}
	}
	if seen[name] {
		dup := field.Duplicate(path, name)
		dup.Detail = "give each " + what + " its own name: a run records progress by " + what + " name"
		return field.ErrorList{dup}
	}
	seen[name] = true
	return nil
}

// stepKinds lists the kinds a step may set, for messages.
const stepKinds = "crds, manifests, image, helm, job, recreate, freeze, approval, pause, autopilot, distribute, clusterConfig, installation or helmUninstall"

func validateStepKind(path *field.Path, s v1alpha1.Step, base string) field.ErrorList {
	set := 0
	var errs field.ErrorList
	if s.CRDs != nil {
		set++
		errs = append(errs, validateSource(path.Child("crds"), s.CRDs.Source, base)...)
		if s.CRDs.MinCount < 0 {
			errs = append(errs, field.Invalid(path.Child("crds", "minCount"), s.CRDs.MinCount, "must not be negative"))
		}
	}
	if s.Manifests != nil {
		set++
		errs = append(errs, validateSource(path.Child("manifests"), s.Manifests.Source, base)...)
	}
	if s.Image != nil {
		set++
		errs = append(errs, validateImage(path.Child("image"), s.Image)...)
	}
	if s.Job != nil {
		set++
		errs = append(errs, validateJob(path.Child("job"), s.Job, base)...)
	}
	if s.Recreate != nil {
		set++
		errs = append(errs, validateRecreate(path.Child("recreate"), s.Recreate, base)...)
	}
	if s.Freeze != nil {
		set++
		errs = append(errs, validateFreeze(path.Child("freeze"), s.Freeze)...)
	}
	if s.Approval != nil {
		set++
	}
	if s.Pause != nil {
		set++
		if s.Pause.Duration.Duration <= 0 {
			errs = append(errs, field.Required(path.Child("pause", "duration"), "how long to wait, e.g. 5m"))
		}
	}
	if s.Helm != nil {
		set++
		errs = append(errs, validateHelm(path.Child("helm"), s.Helm, base)...)
	}
	if s.Autopilot != nil {
		set++
		errs = append(errs, validateAutopilot(path.Child("autopilot"), s.Autopilot)...)
	}
	if s.Distribute != nil {
		set++
		errs = append(errs, validateDistribute(path.Child("distribute"), s.Distribute)...)
	}
	if s.ClusterConfig != nil {
		set++
		errs = append(errs, validateClusterConfig(path.Child("clusterConfig"), s.ClusterConfig)...)
	}
	if s.Installation != nil {
		set++
		errs = append(errs, validateInstallation(path.Child("installation"), s.Installation)...)
	}
	if u := s.HelmUninstall; u != nil {
		set++
		errs = append(errs, validateRelease(path.Child("helmUninstall"), u.Release, u.Namespace)...)
	}
	switch set {
	case 0:
		errs = append(errs, field.Required(path, "set exactly one step kind: "+stepKinds))
	case 1:
	default:
		errs = append(errs, field.Forbidden(path, "set exactly one step kind: "+stepKinds+"; split this step in two"))
	}
	return errs
}

func validateSource(path *field.Path, src v1alpha1.Source, base string) field.ErrorList {
	var errs field.ErrorList
	if src.CAFile != "" && src.InsecureSkipVerify {
		errs = append(errs, field.Forbidden(path, "set caFile or insecureSkipVerify, not both: caFile verifies the server with that CA, insecureSkipVerify does not verify it at all"))
	}
	if n := sourcesSet(src); n != 1 {
		return append(errs, field.Invalid(path, fmt.Sprintf("%d sources", n), "set exactly one of path, url, inline, configMap or secret"))
	}
	switch {
	case src.ConfigMap != nil:
		errs = append(errs, validateKeyRef(path.Child("configMap"), src.ConfigMap)...)
	case src.Secret != nil:
		errs = append(errs, validateKeyRef(path.Child("secret"), src.Secret)...)
	case src.Path != "":
		if _, err := os.Stat(resolve(base, src.Path)); err != nil {
			errs = append(errs, field.Invalid(path.Child("path"), src.Path, fmt.Sprintf("cannot read it (%v); paths are relative to the plan file", err)))
		}
	case src.URL != "":
		u, err := url.Parse(src.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, field.Invalid(path.Child("url"), redact.URL(src.URL), "must be an absolute http(s) URL"))
		}
		if src.CAFile != "" {
			if _, err := os.Stat(resolve(base, src.CAFile)); err != nil {
				errs = append(errs, field.Invalid(path.Child("caFile"), src.CAFile, fmt.Sprintf("cannot read it (%v)", err)))
			}
		}
	}
	if src.URL == "" && (src.CAFile != "" || src.InsecureSkipVerify) {
		errs = append(errs, field.Forbidden(path.Child("caFile"), "caFile and insecureSkipVerify apply to url only"))
	}
	return errs
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}
