package plan

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// TestBoundsMatchTheCRD: the CLI's bounds are the generated CRD's, so a
// plan file the CLI runs is one the API server takes as a resource.
func TestBoundsMatchTheCRD(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/upshift.dev_upgradeplans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec := dig(t, crd, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties")
	stage := dig(t, spec, "stages", "items", "properties")
	step := dig(t, stage, "steps", "items", "properties")
	envKept := dig(t, stage, "gates", "items", "properties", "envKept", "properties")
	for _, c := range []struct {
		what string
		crd  any
		cli  int
	}{
		{"spec.version maxLength", dig(t, spec, "version", "maxLength"), maxVersionLength},
		{"spec.serviceAccountName maxLength", dig(t, spec, "serviceAccountName", "maxLength"), maxServiceAccountName},
		{"spec.stages maxItems", dig(t, spec, "stages", "maxItems"), maxStages},
		{"stage name maxLength", dig(t, stage, "name", "maxLength"), maxNameLength},
		{"stage steps maxItems", dig(t, stage, "steps", "maxItems"), maxStepsPerStage},
		{"stage gates maxItems", dig(t, stage, "gates", "maxItems"), maxGatesPerStage},
		{"step name maxLength", dig(t, step, "name", "maxLength"), maxNameLength},
		{"step dependsOn maxItems", dig(t, step, "dependsOn", "maxItems"), maxDependsOn},
		{"step dependsOn items maxLength", dig(t, step, "dependsOn", "items", "maxLength"), maxNameLength},
		{"helm release maxLength", dig(t, step, "helm", "properties", "release", "maxLength"), maxHelmReleaseLength},
		{"helm valuesFiles maxItems", dig(t, step, "helm", "properties", "valuesFiles", "maxItems"), maxHelmValuesFileCount},
		{"helm valuesFrom maxItems", dig(t, step, "helm", "properties", "valuesFrom", "maxItems"), maxHelmValuesFromCount},
		{"helm valuesFrom name maxLength", dig(t, step, "helm", "properties", "valuesFrom", "items", "properties", "name", "maxLength"), maxObjectNameLength},
		{"helm valuesFrom valuesKey maxLength", dig(t, step, "helm", "properties", "valuesFrom", "items", "properties", "valuesKey", "maxLength"), maxDataKeyLength},
		{"configMap name maxLength", dig(t, step, "manifests", "properties", "configMap", "properties", "name", "maxLength"), maxObjectNameLength},
		{"configMap key maxLength", dig(t, step, "manifests", "properties", "configMap", "properties", "key", "maxLength"), maxDataKeyLength},
		{"secret name maxLength", dig(t, step, "job", "properties", "secret", "properties", "name", "maxLength"), maxObjectNameLength},
		{"secret key maxLength", dig(t, step, "job", "properties", "rollbackJob", "properties", "secret", "properties", "key", "maxLength"), maxDataKeyLength},
		{"envKept names maxItems", dig(t, envKept, "names", "maxItems"), maxEnvKeptNames},
		{"envKept names items maxLength", dig(t, envKept, "names", "items", "maxLength"), maxEnvNameLength},
	} {
		if fmt.Sprint(c.crd) != fmt.Sprint(c.cli) {
			t.Errorf("%s: the CRD says %v, the CLI %d", c.what, c.crd, c.cli)
		}
	}
}

func TestValidateRefusesWhatTheCRDWould(t *testing.T) {
	p := &v1alpha1.UpgradePlan{Spec: v1alpha1.UpgradePlanSpec{Version: "1"}}
	for i := range maxStages + 1 {
		st := v1alpha1.Stage{Name: fmt.Sprintf("s%d", i), Steps: []v1alpha1.Step{{Name: fmt.Sprintf("p%d", i)}}}
		p.Spec.Stages = append(p.Spec.Stages, st)
	}
	p.Spec.Stages[0].Steps[0].Name = strings.Repeat("x", maxNameLength+1)
	got := validateBounds(p).ToAggregate().Error()
	for _, want := range []string{
		"spec.stages: Too many: 33: must have at most 32 items",
		"split the upgrade into plans run one after the other",
		"spec.stages[0].steps[0].name: Too long",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	p.Spec.Stages = p.Spec.Stages[:maxStages]
	p.Spec.Stages[0].Steps[0].Name = strings.Repeat("x", maxNameLength)
	if errs := validateBounds(p); len(errs) > 0 {
		t.Errorf("a plan at the bounds was refused: %v", errs.ToAggregate())
	}
}

// dig walks maps by key and slices by index.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not a map", p)
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				t.Fatalf("at %v: not a list that long", p)
			}
			v = s[k]
		}
	}
	return v
}
