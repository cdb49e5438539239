package runner

import (
	"github.com/upshift-dev/upshift/api/v1alpha1"
)

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
