package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
