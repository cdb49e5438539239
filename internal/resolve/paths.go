package resolve

import (
	"fmt"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// SourcePath is the field path that keys a step's (main) source.
func SourcePath(stage, step int, s v1alpha1.Step) string {
	kind := "manifests"
	switch {
	case s.CRDs != nil:
		kind = "crds"
	case s.Job != nil:
		kind = "job"
	case s.Recreate != nil:
		kind = "recreate.from"
	}
	return fmt.Sprintf("spec.stages[%d].steps[%d].%s", stage, step, kind)
}

// HelmChartPath keys a helm step's chart archive (.tgz bytes).
func HelmChartPath(stage, step int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].helm.chart", stage, step)
}

// HelmValuesFromPath keys a helm step's k-th valuesFrom entry (absent
// when the entry is optional and found nothing).
func HelmValuesFromPath(stage, step, k int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].helm.valuesFrom[%d]", stage, step, k)
}

// HelmValuesPath keys a helm step's k-th values file.
func HelmValuesPath(stage, step, k int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].helm.valuesFiles[%d]", stage, step, k)
}

// isHelmSource tells the sources that are not Kubernetes objects: charts
// and values files, kept as bytes.
func isHelmSource(path string) bool { return strings.Contains(path, ".helm.") }

// RollbackJobPath keys a job step's rollbackJob source.
func RollbackJobPath(stage, step int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].job.rollbackJob", stage, step)
}

// planSource is one source of a step and the field path that keys it.
type planSource struct {
	path string
	src  v1alpha1.Source
}

// stepSources are a step's sources: its main one and a job's rollbackJob.
func stepSources(stage, step int, s v1alpha1.Step) []planSource {
	src, ok := stepSource(s)
	if !ok {
		return nil
	}
	out := []planSource{{SourcePath(stage, step, s), src}}
	if s.Job != nil && s.Job.RollbackJob != nil {
		out = append(out, planSource{RollbackJobPath(stage, step), *s.Job.RollbackJob})
	}
	return out
}

// refField is the field of a source that names a ConfigMap or a Secret,
// for messages (".configMap", ".secret"; "" for the other kinds, whose
// messages name themselves).
func refField(src v1alpha1.Source) string {
	switch {
	case src.ConfigMap != nil:
		return ".configMap"
	case src.Secret != nil:
		return ".secret"
	}
	return ""
}

func stepSource(s v1alpha1.Step) (v1alpha1.Source, bool) {
	switch {
	case s.CRDs != nil:
		return s.CRDs.Source, true
	case s.Manifests != nil:
		return s.Manifests.Source, true
	case s.Job != nil:
		return s.Job.Source, true
	case s.Recreate != nil && s.Recreate.From != nil:
		return *s.Recreate.From, true
	}
	return v1alpha1.Source{}, false
}

// ObjectSources lists the fields of a plan that are read from ConfigMaps
// and Secrets in the cluster (configMap and secret sources, helm
// valuesFrom), so a driver without a cluster can say which fields need
// one before it tries.
func ObjectSources(p *v1alpha1.UpgradePlan) []string {
	var out []string
	for i, st := range p.Spec.Stages {
		for j, s := range st.Steps {
			for _, ps := range stepSources(i, j, s) {
				if f := refField(ps.src); f != "" {
					out = append(out, ps.path+f)
				}
			}
			if s.Helm != nil {
				for k := range s.Helm.ValuesFrom {
					out = append(out, HelmValuesFromPath(i, j, k))
				}
			}
		}
	}
	return out
}

// secretSources are the keys of the sources read from Secrets: decoding
// them quotes none of their content in errors.
func secretSources(p *v1alpha1.UpgradePlan) map[string]bool {
	out := map[string]bool{}
	for i, st := range p.Spec.Stages {
		for j, s := range st.Steps {
			for _, ps := range stepSources(i, j, s) {
				if ps.src.Secret != nil {
					out[ps.path] = true
				}
			}
		}
	}
	return out
}
