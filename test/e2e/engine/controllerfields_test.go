package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// A plan file may set the controller's settings, serviceAccountName and
// suspend, so one file serves both drivers. The CLI does not act on them
// and says so once each: `plan -o json` on stderr (stdout stays JSON),
// `apply` among its lines, and apply runs the plan with the user's own
// credentials all the same.
func TestControllerFieldsInAPlanFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	file := filepath.Join(t.TempDir(), "plan.yaml")
	plan := `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: controller-fields}
spec:
  version: 1.0.0
  serviceAccountName: upgrader   # no such ServiceAccount: the CLI never uses it
  suspend: true
  stages:
  - name: config
    steps:
    - name: settings
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: controller-fields, namespace: default}
          data: {applied: "yes"}
`
	if err := os.WriteFile(file, []byte(plan), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		saPlan       = "spec.serviceAccountName applies when the controller runs this plan; upshift plan checks your own credentials"
		suspendPlan  = "spec.suspend applies when the controller runs this plan; upshift plan previews it all the same"
		saApply      = "spec.serviceAccountName applies when the controller runs this plan; upshift apply runs with your own credentials"
		suspendApply = "spec.suspend applies when the controller runs this plan; upshift apply runs it all the same"
	)
	once := func(what, out string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if n := strings.Count(out, l); n != 1 {
				t.Errorf("%s says %q %d times, want once:\n%s", what, l, n, out)
			}
		}
	}

	r := w.mustExit(0, nil, "plan", "-f", file, "-o", "json")
	if !json.Valid([]byte(r.stdout)) {
		t.Errorf("plan -o json: stdout is not JSON:\n%s", r.stdout)
	}
	once("plan -o json's stderr", r.stderr, saPlan, suspendPlan)

	r = w.mustExit(0, nil, "apply", "-f", file)
	once("apply", r.stdout, saApply, suspendApply)
	cm, err := w.cs.CoreV1().ConfigMaps("default").Get(w.ctx, "controller-fields", metaGet)
	if err != nil || cm.Data["applied"] != "yes" {
		t.Errorf("a suspended plan's ConfigMap after apply: %v, %v; want it applied", cm.Data, err)
	}
}
