package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanPrintsStagesOfAValidPlan(t *testing.T) {
	out, _, err := run(t, "plan", "-f", "../plan/testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plan demo-1.1.0: target version 1.1.0, 2 stage(s)", "checked the file only", "1. stage crds", "step controller-manager: set images of Deployment demo-system/demo-controller-manager: manager=example.com/demo/controller:1.1.0", "gate http http://127.0.0.1:9000/healthz", "gate envKept deployment demo-system/demo-controller-manager container manager: POD_NAMESPACE, CLUSTER_ID"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanListsEveryProblemAndExitsOne(t *testing.T) {
	_, _, err := run(t, "plan", "-f", "../plan/testdata/invalid.yaml")
	if err == nil {
		t.Fatal("an invalid plan passed")
	}
	if !strings.Contains(err.Error(), "10 problem(s), nothing was changed") || !strings.Contains(err.Error(), "\n  spec.stages[1].steps[0].image.kind") {
		t.Errorf("error:\n%v", err)
	}
	if code := exitCode(err); code != ExitInvalid {
		t.Errorf("exit code %d, want %d", code, ExitInvalid)
	}
}

// controllerFieldsPlan sets the two fields only the controller acts on.
const controllerFieldsPlan = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: controller-fields}
spec:
  version: 1.0.0
  serviceAccountName: upgrader
  suspend: true
  stages:
  - name: config
    steps:
    - name: settings
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: settings, namespace: default}
`

// A plan file may set serviceAccountName and suspend (the controller's
// settings): plan accepts it and says, once for each, that it does not
// act on them; with -o json the notices go to stderr, the data alone to
// stdout.
func TestPlanSaysWhatOnlyTheControllerDoes(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	file := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(file, []byte(controllerFieldsPlan), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "plan", "-f", file)
	if err != nil {
		t.Fatalf("plan refused a file with the controller's fields: %v", err)
	}
	for _, want := range []string{
		"spec.serviceAccountName applies when the controller runs this plan; upshift plan checks your own credentials\n",
		"spec.suspend applies when the controller runs this plan; upshift plan previews it all the same\n",
		"plan controller-fields: target version 1.0.0",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("output has %q %d times, want once:\n%s", want, strings.Count(out, want), out)
		}
	}

	plain := strings.Replace(strings.Replace(controllerFieldsPlan, "  serviceAccountName: upgrader\n", "", 1), "  suspend: true\n", "", 1)
	if err := os.WriteFile(file, []byte(plain), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, "plan", "-f", file); err != nil || strings.Contains(out, "applies when the controller") {
		t.Errorf("a plan without the controller's fields: %v, notices in:\n%s", err, out)
	}
}
