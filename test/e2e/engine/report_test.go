package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/report"
)

// TestReportOfARolledBackRun: after version 1.0.0, an upgrade whose
// blocking http gate fails (and a warning gate too) rolls back; `upshift
// report` tells it from the run's record alone: from and to, each stage
// and step with its duration, the failed gates under their severities,
// the stages rolled back with the restore verified, and the command that
// goes on. -o json says the same to machines, several names report the
// hops of one upgrade, an unknown name says how to list runs, and the
// gate URL's credentials show nowhere.
func TestReportOfARolledBackRun(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "degraded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()

	gate := strings.Replace(failing.URL, "http://", "http://ops:s3cret@", 1) + "/healthz?token=t0ken"
	dir := t.TempDir()
	write(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\"}\n")
	write(t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: config
    steps:
    - name: settings
      manifests: {path: settings.yaml}
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: example.com/shop/web:2.0.0}}
    gates:
    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}
    - severity: warning
      timeout: 1s
      http: {url: %q, interval: 200ms}
    - timeout: 2s
      http: {url: %q, interval: 200ms}
`, failing.URL+"/metrics", gate))
	w.mustExit(2, nil, "apply", "-f", filepath.Join(dir, "plan.yaml"))

	md := w.mustExit(0, nil, "report", "shop-2.0.0").stdout
	mustContain(t, "report", md,
		"# Upgrade report: run shop-2.0.0",
		"- **From:** 1.0.0", "- **To:** 2.0.0",
		"- **Outcome:** RolledBack: rolled back, restore verified",
		"### Stage 1: config, RolledBack, took ", "### Stage 2: workloads, RolledBack, took ",
		"- **Restore verified:** yes",
		"`upshift apply --retry -f PLAN`")
	for _, step := range []string{"settings", "web"} {
		if !regexp.MustCompile(`\n\| ` + step + ` \| Succeeded \| 20\d\d-[-0-9T:]+Z \| [0-9.]+(ms|s) \|`).MatchString(md) {
			t.Errorf("the report lacks step %s with its start and duration:\n%s", step, md)
		}
	}
	section := func(title string) string {
		_, after, ok := strings.Cut(md, title+"\n")
		if !ok {
			t.Fatalf("the report lacks section %q:\n%s", title, md)
		}
		if end := strings.Index(after, "\n#"); end >= 0 {
			return after[:end]
		}
		return after
	}
	mustContain(t, "blocking gates", section("### Blocking (must pass)"),
		"| workloads | ready deployment shop/web | ✅ passed |",
		"/healthz?xxxxx | ❌ failed |", "503")
	mustContain(t, "warning gates", section("### Warning (should pass)"), "/metrics | ❌ failed |")
	mustContain(t, "issues", section("## Issues encountered"), "warning gate http "+failing.URL+"/metrics did not pass")
	rollback := section("## Rollback")
	mustContain(t, "rollback", rollback, "| workloads | RolledBack | yes |", "| config | RolledBack | yes |")
	if strings.Index(rollback, "| workloads |") > strings.Index(rollback, "| config |") {
		t.Errorf("stages are rolled back last first; the report shows:\n%s", rollback)
	}

	var rep report.Report
	out := w.mustExit(0, nil, "report", "shop-2.0.0", "-o", "json").stdout
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decode report -o json: %v\n%s", err, out)
	}
	if rep.From != "1.0.0" || rep.Phase != v1alpha1.RunRolledBack || rep.Rollback == nil || !rep.Rollback.Verified ||
		len(rep.Gates.Blocking) != 2 || rep.Gates.Blocking[1].Result != report.Failed || len(rep.Next) != 1 || rep.Next[0].Kind != report.NewAttempt {
		t.Errorf("report -o json: %s", out)
	}
	for _, output := range []string{md, out} {
		if strings.Contains(output, "s3cret") || strings.Contains(output, "t0ken") {
			t.Errorf("a credential of the gate's URL reached the report:\n%s", output)
		}
	}

	hops := w.mustExit(0, nil, "report", "shop-1.0.0", "shop-2.0.0").stdout
	mustContain(t, "two hops", hops, "# Upgrade report: unknown → 2.0.0", "- **Reached:** 1.0.0",
		"| 1 | shop-1.0.0 | unknown | 1.0.0 | Succeeded |", "| 2 | shop-2.0.0 | 1.0.0 | 2.0.0 | RolledBack |",
		"## Hop 2: run shop-2.0.0 (1.0.0 → 2.0.0)")

	unknown := w.mustExit(1, nil, "report", "shop-9.9.9")
	mustContain(t, "unknown run", unknown.stderr, `no run named "shop-9.9.9"`, "upshift history lists them")
}
