package apps_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// `upshift app` steers a rollout through all its actions: get shows the
// step held, pause and resume hold and free it, abort rolls it back,
// retry starts it again, promote finishes it.
func TestAppCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("cart", "registry.example.com/cart:v1", 4)
	e.startController("ctl-cli")
	if err := e.kc.Create(e.ctx, canaryRollout(e.ns, "cart", "v2", []v1alpha1.AppCanaryStep{{Weight: 50, Pause: 600}, {Weight: 100}})); err != nil {
		t.Fatal(err)
	}
	e.waitStep("cart", 0, 50)
	if out := e.upshift("app", "get", "-n", e.ns); !strings.Contains(out, "cart") || !strings.Contains(out, "1/2 50%") {
		t.Errorf("upshift app get:\n%s", out)
	}
	if out := e.upshift("app", "get", "-n", e.ns, "cart"); !strings.Contains(out, "[50% 600s: holding,") {
		t.Errorf("upshift app get cart:\n%s", out)
	}

	e.upshift("app", "pause", "-n", e.ns, "cart")
	e.waitFor("cart", "Paused", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionPaused) && a.Status.PausedAt != nil
	})
	e.upshift("app", "resume", "-n", e.ns, "cart")
	e.waitFor("cart", "resumed", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return a.Status.PausedAt == nil && meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionPaused) == nil
	})

	e.upshift("app", "abort", "-n", e.ns, "cart")
	e.waitFor("cart", "RolledBack", time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack })
	e.upshift("app", "retry", "-n", e.ns, "cart")
	e.waitFor("cart", "at attempt 2", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return a.Status.Attempt == 2 && a.Status.Phase == v1alpha1.AppDeploying && a.Status.PauseStartedAt != nil
	})
	e.upshift("app", "promote", "-n", e.ns, "cart")
	e.waitFor("cart", "Healthy", time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppHealthy })

	var got v1alpha1.AppRollout
	if err := json.Unmarshal([]byte(e.upshift("app", "get", "-n", e.ns, "cart", "-o", "json")), &got); err != nil || got.Status.CurrentVersion != "v2" {
		t.Errorf("upshift app get -o json: %v, current version %q", err, got.Status.CurrentVersion)
	}
}

// upshift runs the CLI as the test's admin and returns its output; a
// failure fails the test.
func (e *env) upshift(args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, append([]string{"--kubeconfig", e.c.KubeconfigPath()}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("upshift %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
