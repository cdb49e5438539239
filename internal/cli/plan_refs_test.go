package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

const refsPlan = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: refs}
spec:
  version: 1.0.0
  stages:
  - name: config
    steps:
    - name: settings
      manifests: {inline: "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"}
    - name: web
      manifests: {configMap: {name: web-manifests}}
    - name: addon
      helm:
        release: addon
        namespace: shop
        chart: addon
        repo: https://charts.example.test
        valuesFrom: [{kind: Secret, name: addon-values}]
`

// Without a cluster, a plan whose sources live in ConfigMaps or Secrets
// is refused naming the first such field and the namespace it would be
// read from (default: the file sets none), and the way to give a cluster;
// nothing is fetched first.
func TestPlanWithoutAClusterNamesTheFieldsThatNeedOne(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	file := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(file, []byte(refsPlan), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "plan", "-f", file)
	if err == nil {
		t.Fatal("plan passed without a cluster to read the ConfigMap from")
	}
	for _, want := range []string{
		"spec.stages[0].steps[1].manifests.configMap (and 1 more) is read from a ConfigMap or Secret in the cluster (namespace default)",
		"set --kubeconfig or KUBECONFIG",
		"nothing was changed",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// The preview names ConfigMap and Secret sources and valuesFrom by name
// and key, never by content.
func TestDescribeObjectSources(t *testing.T) {
	for _, tt := range []struct {
		step v1alpha1.Step
		want string
	}{
		{v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "web-manifests"}}}},
			"apply manifests from configMap web-manifests"},
		{v1alpha1.Step{Job: &v1alpha1.JobStep{Source: v1alpha1.Source{Secret: &v1alpha1.ObjectKeyRef{Name: "migrate", Key: "up.yaml"}},
			RollbackJob: &v1alpha1.Source{Secret: &v1alpha1.ObjectKeyRef{Name: "migrate", Key: "down.yaml"}}}},
			"run the Job in secret migrate/up.yaml (on rollback: secret migrate/down.yaml)"},
		{v1alpha1.Step{Helm: &v1alpha1.HelmStep{Release: "addon", Namespace: "shop", Chart: "addon",
			ValuesFrom: []v1alpha1.ValuesReference{{Kind: "ConfigMap", Name: "addon-values"}, {Kind: "Secret", Name: "addon-db", ValuesKey: "prod.yaml", Optional: true}}}},
			"install or upgrade Helm release shop/addon from addon, values from configMap addon-values/values.yaml, secret addon-db/prod.yaml (optional)"},
	} {
		if got := describeStep(tt.step); got != tt.want {
			t.Errorf("describeStep = %q\nwant           %q", got, tt.want)
		}
	}
}
