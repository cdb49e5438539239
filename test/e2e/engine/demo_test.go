package engine_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// TestDemo runs `upshift demo` as a user would (`make demo` does): it
// must exit 0, which it does only when 1.1.0 succeeded and 2.0.0 ended
// rolled back with exit code 2, and the same 2.0.0 plan, bundled and
// applied as an UpgradePlan resource, was rolled back by the controller,
// and the app's canary was rolled back by its analysis, then the next
// version promoted. Its cluster lives in a test directory and is stopped
// at the end.
func TestDemo(t *testing.T) {
	t.Parallel()
	testenv.SkipIfShort(t)
	bin := upshiftBinary(t)
	dir, err := os.MkdirTemp("", testenv.DirPrefix+"demo-")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "UPSHIFT_CLUSTERS_DIR="+dir, "KUBECONFIG=")
	t.Cleanup(func() {
		down := exec.Command(bin, "cluster", "down", "--name", "demo")
		down.Env = env
		if out, err := down.CombinedOutput(); err != nil {
			t.Logf("cluster down: %v\n%s", err, out)
		}
		os.RemoveAll(dir)
	})
	cmd := exec.Command(bin, "demo")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("upshift demo: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"$ upshift apply -f examples/demo/1.1.0/plan.yaml",
		"reached version 1.1.0",
		"step proxy failed",
		"rolled back data-plane, addons, schema, control-plane, crds; restore verified",
		"release demo-system/demo-addon rolled back to revision 2",
		"rollback job: job demo-system/demo-migrate-2-0-0-down completed",
		"exit code 4: waiting for approval",
		"approved step approve of run demo-1.1.0",
		"job demo-system/demo-migrate-2-0-0 completed",
		"exit code 2, as expected",
		"installed CRD upgradeplans.upshift.dev",
		"$ kubectl get upgradeplans -n demo-upgrades -w",
		"$ kubectl annotate upgradeplan demo-2.0.0-controller upshift.dev/approve=approve",
		"RollingBack",
		"$ kubectl delete job -n demo-system demo-migrate-2-0-0 demo-migrate-2-0-0-down",
		"demo-2.0.0-controller   2.0.0   RolledBack",
		"StepFailed  stage data-plane: step proxy failed",
		"rolled back data-plane, addons, schema, control-plane, crds; restore verified",
		"stop it with: upshift cluster down --name demo",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	wantAppPart(t, s)
	// The controller's event says what the rollback did on its first line,
	// the line an event list shows, before the crashed container's logs.
	rolledBack := regexp.MustCompile(`(?m)^RolledBack  run demo-upgrades\.demo-2\.0\.0-controller rolled back: stage data-plane: step proxy failed: .*; rolled back data-plane, addons, schema, control-plane, crds; restore verified$`)
	if !rolledBack.MatchString(s) {
		t.Errorf("demo output lacks the controller's RolledBack event, outcome on its first line (%s)", rolledBack)
	}
	if t.Failed() {
		t.Logf("output:\n%s", s)
	}
}

// wantAppPart checks the demo's app part: v2's canary breaches its
// analysis on a real Prometheus and is rolled back by itself; v3 is
// promoted. Without a prometheus binary the demo says how to get one.
func wantAppPart(t *testing.T, s string) {
	t.Helper()
	app := []string{
		"$ kubectl get approllouts -n demo-cart -w",
		"rolled back to example.com/demo/cart:v1: analysis: metric error-rate failed",
		"error-rate: Failed, 1 measured, 1 failed",
		"$ upshift app promote cart -n demo-cart",
		"approllout/cart: promote requested",
		"steps     20% until promoted ✓ → 100% ✓",
		"Deployment cart runs example.com/demo/cart:v3 at 5 replicas",
	}
	if _, err := exec.LookPath("prometheus"); err != nil {
		if os.Getenv("UPSHIFT_REQUIRE_PROMETHEUS") != "" {
			t.Errorf("prometheus is required (UPSHIFT_REQUIRE_PROMETHEUS): %v", err)
		}
		app = []string{"skipped: the canary's analysis asks Prometheus, and no prometheus binary is on PATH: apt-get install prometheus"}
	}
	for _, want := range app {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}
