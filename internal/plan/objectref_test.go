package plan

import (
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// configMap and secret sources and valuesFrom are checked as the CRD
// checks them: one source of five, names the API server takes, keys a
// ConfigMap may have, the kinds valuesFrom knows.
func TestValidateObjectReferences(t *testing.T) {
	cm := func(name, key string) *v1alpha1.ObjectKeyRef { return &v1alpha1.ObjectKeyRef{Name: name, Key: key} }
	for _, tt := range []struct {
		name string
		step v1alpha1.Step
		want []string // substrings of the errors, each one; none: valid
	}{
		{name: "configMap, every key", step: v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{ConfigMap: cm("web-manifests", "")}}}},
		{name: "secret key", step: v1alpha1.Step{Job: &v1alpha1.JobStep{Source: v1alpha1.Source{Secret: cm("migrate", "up.yaml")}}}},
		{name: "configMap and inline",
			step: v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{ConfigMap: cm("a", ""), Inline: "x"}}},
			want: []string{`spec.stages[0].steps[0].manifests: Invalid value: "2 sources": set exactly one of path, url, inline, configMap or secret`}},
		{name: "configMap and secret",
			step: v1alpha1.Step{CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{ConfigMap: cm("a", ""), Secret: cm("b", "")}}},
			want: []string{"set exactly one of path, url, inline, configMap or secret"}},
		{name: "no name",
			step: v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Secret: cm("", "k")}}},
			want: []string{"spec.stages[0].steps[0].manifests.secret.name: Required value"}},
		{name: "a name the API server refuses",
			step: v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{ConfigMap: cm("Web_Manifests", "")}}},
			want: []string{`spec.stages[0].steps[0].manifests.configMap.name: Invalid value: "Web_Manifests"`}},
		{name: "a name too long",
			step: v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{ConfigMap: cm(strings.Repeat("a", 254), "")}}},
			want: []string{"spec.stages[0].steps[0].manifests.configMap.name: Too long"}},
		{name: "a key with a slash",
			step: v1alpha1.Step{Job: &v1alpha1.JobStep{Source: v1alpha1.Source{Inline: "x"}, RollbackJob: &v1alpha1.Source{Secret: cm("m", "jobs/down.yaml")}}},
			want: []string{`spec.stages[0].steps[0].job.rollbackJob.secret.key: Invalid value: "jobs/down.yaml"`}},
		{name: "valuesFrom",
			step: v1alpha1.Step{Helm: &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "c", Repo: "https://charts.test",
				ValuesFrom: []v1alpha1.ValuesReference{
					{Kind: "ConfigMap", Name: "values"},
					{Kind: "Secret", Name: "secret-values", ValuesKey: "prod.yaml", Optional: true},
				}}}},
		{name: "valuesFrom mistakes",
			step: v1alpha1.Step{Helm: &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "c", Repo: "https://charts.test",
				ValuesFrom: []v1alpha1.ValuesReference{
					{Kind: "configmap", Name: "values"},
					{Kind: "Secret"},
					{Kind: "Secret", Name: "s", ValuesKey: "a b"},
				}}},
			want: []string{
				`spec.stages[0].steps[0].helm.valuesFrom[0].kind: Unsupported value: "configmap": supported values: "ConfigMap", "Secret"`,
				"spec.stages[0].steps[0].helm.valuesFrom[1].name: Required value",
				`spec.stages[0].steps[0].helm.valuesFrom[2].valuesKey: Invalid value: "a b"`,
			}},
		{name: "more valuesFrom than the CRD allows",
			step: v1alpha1.Step{Helm: &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "c", Repo: "https://charts.test",
				ValuesFrom: make([]v1alpha1.ValuesReference, maxHelmValuesFromCount+1)}},
			want: []string{"spec.stages[0].steps[0].helm.valuesFrom: Too many: 33: must have at most 32 items"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.step.Name = "s"
			p := &v1alpha1.UpgradePlan{}
			p.APIVersion, p.Kind, p.Name = v1alpha1.APIVersion, v1alpha1.PlanKind, "p"
			p.Spec.Version = "1.0.0"
			p.Spec.Stages = []v1alpha1.Stage{{Name: "s", Steps: []v1alpha1.Step{tt.step}}}
			errs := Validate(&Loaded{Plan: p})
			got := errs.ToAggregate()
			if len(tt.want) == 0 {
				if got != nil {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("accepted; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("missing %q in:\n%s", w, strings.ReplaceAll(got.Error(), ", ", "\n"))
				}
			}
		})
	}
}
