package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/gates/envkept"
)

func validateEnvKeptGate(path *field.Path, g *v1alpha1.EnvKeptGate) field.ErrorList {
	var errs field.ErrorList
	if !workloadKinds[g.Kind] {
		errs = append(errs, field.NotSupported(path.Child("kind"), g.Kind, []string{"Deployment", "DaemonSet", "StatefulSet"}))
	}
	errs = append(errs, validNamespace(path.Child("namespace"), g.Namespace, "the workload's namespace")...)
	switch msgs := validation.IsDNS1123Subdomain(g.Name); {
	case g.Name == "":
		errs = append(errs, field.Required(path.Child("name"), "the workload's name"))
	case len(msgs) > 0:
		errs = append(errs, field.Invalid(path.Child("name"), g.Name, "not a workload name: "+strings.Join(msgs, "; ")))
	}
	switch msgs := validation.IsDNS1123Label(g.Container); {
	case g.Container == "":
		errs = append(errs, field.Required(path.Child("container"), "the container whose variables are kept, e.g. controller-manager"))
	case len(msgs) > 0:
		errs = append(errs, field.Invalid(path.Child("container"), g.Container, "not a container name: "+strings.Join(msgs, "; ")))
	}
	seen := map[string]bool{}
	for i, n := range g.Names {
		p := path.Child("names").Index(i)
		if msgs := validation.IsEnvVarName(n); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p, n, "not an environment variable name: "+strings.Join(msgs, "; ")))
			continue
		}
		if seen[n] {
			d := field.Duplicate(p, n)
			d.Detail = "list each variable once"
			errs = append(errs, d)
		}
		seen[n] = true
	}
	return errs
}

// validateEnvKeptStage refuses an envKept gate whose workload no step of
// its stage changes, when the plan alone tells: every step is an image
// step (which names its one workload), an approval or a pause. Other
// steps' objects are known only once their sources are read, and
// preflight checks those.
func validateEnvKeptStage(stagePath *field.Path, st v1alpha1.Stage) field.ErrorList {
	var errs field.ErrorList
	for j, g := range st.Gates {
		k := g.EnvKept
		if k == nil || !workloadKinds[k.Kind] || k.Name == "" {
			continue
		}
		changed, known := false, true
		for _, s := range st.Steps {
			switch {
			case s.Image != nil:
				changed = changed || (s.Image.Kind == k.Kind && s.Image.Namespace == k.Namespace && s.Image.Name == k.Name)
			case s.Approval != nil, s.Pause != nil:
			default:
				known = false
			}
		}
		if known && !changed {
			ref := envkept.Ref(*k)
			errs = append(errs, field.Invalid(stagePath.Child("gates").Index(j).Child("envKept"), ref.String(),
				fmt.Sprintf("no step of stage %q changes it, so the stage's backup does not hold it: %s", st.Name, envkept.StageHint)))
		}
	}
	return errs
}
