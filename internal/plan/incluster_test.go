package plan

import (
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestValidateInClusterRefusesFiles(t *testing.T) {
	p := &v1alpha1.UpgradePlan{}
	p.APIVersion, p.Kind, p.Name = v1alpha1.APIVersion, v1alpha1.PlanKind, "p"
	p.Spec.Version = "1.0.0"
	p.Spec.Stages = []v1alpha1.Stage{{Name: "s", Steps: []v1alpha1.Step{
		{Name: "a", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{Path: "crds/"}}},
		{Name: "b", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{URL: "https://example.test/x.yaml", CAFile: "ca.pem"}}},
		{Name: "c", Helm: &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "./chart", ValuesFiles: []string{"v.yaml"}}},
		{Name: "d", Job: &v1alpha1.JobStep{Source: v1alpha1.Source{Inline: "x"}, RollbackJob: &v1alpha1.Source{Path: "down.yaml"}}},
	}}}
	var got []string
	for _, e := range ValidateInCluster(p) {
		got = append(got, e.Field)
		if !strings.Contains(e.Error(), "cannot read files") {
			t.Errorf("%s: %q does not say why", e.Field, e.Error())
		}
		if fix := map[string]string{"path": "a configMap or secret", "valuesFiles[0]": "helm.valuesFrom"}[e.Field[strings.LastIndex(e.Field, ".")+1:]]; !strings.Contains(e.Detail, fix) {
			t.Errorf("%s: %q does not suggest %q", e.Field, e.Detail, fix)
		}
	}
	want := []string{
		"spec.stages[0].steps[0].crds.path",
		"spec.stages[0].steps[1].manifests.caFile",
		"spec.stages[0].steps[2].helm.chart",
		"spec.stages[0].steps[2].helm.valuesFiles[0]",
		"spec.stages[0].steps[3].job.rollbackJob.path",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("fields:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Inline, ConfigMap and Secret sources, charts from registries and values
// from ConfigMaps and Secrets need no file.
func TestValidateInClusterTakesInlineAndRepositories(t *testing.T) {
	p := &v1alpha1.UpgradePlan{}
	p.APIVersion, p.Kind, p.Name = v1alpha1.APIVersion, v1alpha1.PlanKind, "p"
	p.Spec.Version = "1.0.0"
	p.Spec.Stages = []v1alpha1.Stage{{Name: "s", Steps: []v1alpha1.Step{
		{Name: "a", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n"}}},
		{Name: "b", Helm: &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "oci://registry.test/charts/x", Version: "1.0.0",
			ValuesFrom: []v1alpha1.ValuesReference{{Kind: "ConfigMap", Name: "web-values"}, {Kind: "Secret", Name: "web-secrets", ValuesKey: "prod.yaml", Optional: true}}}},
		{Name: "c", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "crds"}}}},
		{Name: "d", Job: &v1alpha1.JobStep{Source: v1alpha1.Source{Secret: &v1alpha1.ObjectKeyRef{Name: "migrate", Key: "up.yaml"}},
			RollbackJob: &v1alpha1.Source{Secret: &v1alpha1.ObjectKeyRef{Name: "migrate", Key: "down.yaml"}}}},
		{Name: "e", Recreate: &v1alpha1.RecreateStep{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "n", From: &v1alpha1.Source{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "gw", Key: "gw.yaml"}}}},
	}}}
	if errs := ValidateInCluster(p); len(errs) > 0 {
		t.Fatalf("refused a plan without files: %v", errs.ToAggregate())
	}
}
