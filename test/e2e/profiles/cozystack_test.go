package profiles_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var cozyExample = filepath.Join(repo, "examples", "cozystack")

// TestCozyStackProfileUpgradesHopByHop: the CozyStack profile takes the
// simulated v0.35.5 install to v0.37.2 with the CLI, one minor at a time
// (v0.36.2 then v0.37.2: the earlier patches skipped), each hop checked,
// backed up, gated and soaked, and writes the upgrade's report.
func TestCozyStackProfileUpgradesHopByHop(t *testing.T) {
	e := newEnv(t, 6*time.Minute)
	install := filepath.Join(cozyExample, "install", "v0.35.5")
	e.kubectl("apply", "--server-side", "-f", filepath.Join(install, "00-helmrelease-crd.yaml"))
	e.kubectl("wait", "--for=condition=Established", "crd/helmreleases.helm.toolkit.fluxcd.io", "--timeout=60s")
	e.kubectl("apply", "--server-side", "-f", install)
	e.kubectl("rollout", "status", "deployment/cozystack", "-n", "cozy-system", "--timeout=90s")

	report := filepath.Join(t.TempDir(), "upgrade.md")
	out, code := e.upshift("upgrade", "--to", "v0.37.2", "--catalog", cozyExample, "--set", "soak=3s", "--report", report)
	if code != 0 {
		t.Fatalf("upshift upgrade exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "0.36.2") || !strings.Contains(out, "0.37.2") || strings.Contains(out, "cozystack-0.36.0") || strings.Contains(out, "cozystack-0.36.1") {
		t.Errorf("upshift upgrade did not go through 0.36.2 alone to 0.37.2:\n%s", out)
	}
	d, err := e.cs.AppsV1().Deployments("cozy-system").Get(e.ctx, "cozystack", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/cozystack/cozystack/installer:v0.37.2" {
		t.Errorf("installer image %s, want ghcr.io/cozystack/cozystack/installer:v0.37.2", got)
	}
	hr, err := e.dyn.Resource(schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}).
		Namespace("cozy-system").Get(e.ctx, "cozystack-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := hr.GetLabels()["app.kubernetes.io/version"]; v != "v0.37.2" {
		t.Errorf("HelmRelease cozystack-api is at %s, want v0.37.2", v)
	}
	cm, err := e.cs.CoreV1().ConfigMaps("cozy-system").Get(e.ctx, "cozystack-version", metav1.GetOptions{})
	if err != nil || cm.Data["version"] != "17" {
		t.Errorf("cozystack-version (the migration number) = %v, %v; want it left at 17", cm, err)
	}

	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the report: %v", err)
	}
	r := string(b)
	// The first hop starts where the catalog's detection found the
	// platform, though no run succeeded on the cluster before.
	for _, want := range []string{"# Upgrade report: 0.35.5 → 0.37.2", "| 1 | cozystack-0.36.2 | 0.35.5 | 0.36.2 | Succeeded", "| 2 | cozystack-0.37.2 | 0.36.2 | 0.37.2 | Succeeded", "**Reached:** 0.37.2",
		"Blocking (must pass)", "Warning (should pass)", "Info (nice to have)", "soak", "| before any change | nodesReady |"} {
		if !strings.Contains(r, want) {
			t.Errorf("the report does not say %q:\n%s", want, r)
		}
	}
}
