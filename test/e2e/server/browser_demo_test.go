package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	demoplatform "github.com/upshift-dev/upshift/examples/demo"
	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// demoStages are the demo's 1.1.0 plan's stages, in order; the approval
// stands between the control plane and the data plane.
var demoStages = []string{"crds", "control-plane", "schema", "addons", "approve-data-plane", "data-plane", "gateways"}

// TestBrowserDemoUpgrade walks the wizard over the real demo platform,
// served as `upshift demo --ui` serves it (the demo's catalog and app
// plan, its 1.0.0 installed by upshift apply): sign in; Configuration
// finds the one hop to 1.1.0; Infrastructure upgrade, whose timeline
// advances live up to the data plane's approval, given with the Approve
// button, then through the data plane and the gateways to Succeeded, the
// controller-manager on 1.1.0; the app's preflights and upgrade; Done
// with the hop's and the app's reports. The demo's namespaces are fixed:
// no other test of the package may install it.
func TestBrowserDemoUpgrade(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	start := time.Now()
	e := newEnv(t)
	dir := e.demoPlatform()
	s := e.serve("--catalog", dir, "--app-plan", filepath.Join(dir, "app", "plan.yaml"))
	u := e.browser(s)
	const hop = "demo-1.1.0"
	testID := browsertest.TestID

	u.login(adminPassword)
	u.step("welcome")
	u.click(testID("wizard-start"))
	u.step("configuration")
	u.configure("1.1.0")
	if v := u.text(testID("check-versions")); !strings.Contains(v, "1.0.0 → 1.1.0") {
		t.Errorf("the check says %q, want 1.0.0 → 1.1.0", v)
	}
	if hops := u.attrs(testID("hop"), "data-to"); !slices.Equal(hops, []string{"1.1.0"}) {
		t.Fatalf("hops shown: %q, want 1.1.0 alone", hops)
	}
	u.shot("demo-1-configuration", browsertest.Step("configuration")+" fieldset")

	// Host preflights, then the infrastructure upgrade: followed live up
	// to the approval, the control plane's stages done, the data plane's
	// not started.
	throughHostPreflights(t, u, "1.1.0", "")
	u.watch()
	approve := testID("approve") + `[data-run="` + hop + `"]`
	u.until("the data plane's Approve button", visible(approve))
	if m := u.text(testID("waiting-message")); m != "control plane is on 1.1.0: check it, then approve the data plane" {
		t.Errorf("the approval's message in the waiting panel: %q", m)
	}
	phases := u.attrs(testID("timeline-stage"), "data-phase")
	if names := u.attrs(testID("timeline-stage"), "data-name"); !slices.Equal(names, demoStages) {
		t.Fatalf("the timeline's stages: %q, want %q", names, demoStages)
	}
	if !slices.Equal(phases[:4], []string{"Succeeded", "Succeeded", "Succeeded", "Succeeded"}) || phases[5] == "Succeeded" || phases[6] == "Succeeded" {
		t.Errorf("the stages' phases while the approval waits: %q, want the control plane's done and the data plane's not", phases)
	}
	// 4 of 7 stages done: 57%, as embedded-cluster counts components (the
	// steps, 4 of 10, would say 40).
	if p := checkECProgress(t, u); p != 57 {
		t.Errorf("the progress bar while the approval waits: %d, want 57 (4 of 7 components)", p)
	}
	u.shot("demo-2-infra-approval", "")
	u.click(approve)
	u.until("the infrastructure upgraded", `document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Succeeded'`)
	u.until("the timeline's last stage done", `document.querySelector('[data-testid="timeline-stage"][data-name="gateways"]')?.dataset.phase === 'Succeeded'`)

	// What the page showed on the way: the stages after the approval seen
	// before they succeeded, the progress bar rising, the events live.
	w := u.seen()
	t.Logf("seen: %+v", w)
	for _, stage := range demoStages[4:] {
		if p := w.Items[hop+"/"+stage]; len(p) < 2 || p[len(p)-1] != "Succeeded" {
			t.Errorf("stage %s went through %q: want it seen before it succeeded, then Succeeded", stage, p)
		}
	}
	if p := w.Progress; len(p) < 3 || p[len(p)-1] != 100 || !slices.IsSorted(p) {
		t.Errorf("the progress bar went %v: want it to rise in three steps or more to 100, never back", p)
	}
	if !slices.Contains(w.Live, "Live updates of run "+hop+": on") {
		t.Errorf("the live-updates line never said run %s's event stream was on: %q", hop, w.Live)
	}
	if len(w.Errors) > 0 {
		t.Errorf("errors shown: %q", w.Errors)
	}
	if img := e.demoManagerImage(); img != "example.com/demo/controller-manager:1.1.0" {
		t.Errorf("the controller-manager runs %s after the hop", img)
	}
	u.shot("demo-3-infra-succeeded", "")

	// The app on top: its preflights (none fails), its upgrade, Done.
	u.click(testID("wizard-next"))
	u.step("app-preflights")
	u.until("the app preflights' results", `document.querySelector('[data-testid="preflights-status"] .badge')?.dataset.state === 'Succeeded'`)
	if fail := u.texts(browsertest.PreflightGroup("fail") + " " + testID("preflight-item")); len(fail) != 0 {
		t.Errorf("app preflights failed: %q", fail)
	}
	u.click(testID("wizard-next"))
	u.step("app-upgrade")
	u.until("the app upgraded", `document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Succeeded' && document.querySelector('#app-progress')?.getAttribute('aria-valuenow') === '100'`)
	u.click(testID("wizard-next"))
	u.step("done")
	u.until("the reports", `(() => { const r = [...document.querySelectorAll('[data-testid="report"]')]; return r.length === 2 && r.every((el) => el.textContent.startsWith('# Upgrade report')); })()`)
	if runs := u.attrs(testID("report"), "data-run"); !slices.Equal(runs, []string{hop, "demo-shop"}) {
		t.Errorf("reports of %q, want the hop's and the app's", runs)
	}
	for i, r := range u.texts(testID("report")) {
		if !strings.Contains(r, "Succeeded") {
			t.Errorf("report %d does not say Succeeded:\n%s", i, r)
		}
	}
	u.shot("demo-4-done", "")
	u.checkProblems()
	t.Logf("took %s", time.Since(start).Round(time.Second))
}

// demoPlatform writes the demo platform as `upshift demo` does and
// installs its 1.0.0 with upshift apply, into the env's runs namespace;
// it returns the demo's directory (catalog.yaml at its root).
func (e *env) demoPlatform() string {
	e.t.Helper()
	dir := e.t.TempDir()
	if err := os.CopyFS(dir, demoplatform.FS); err != nil {
		e.t.Fatal(err)
	}
	if out, err := runBinary(e, "apply", "-f", filepath.Join(dir, "1.0.0", "plan.yaml"), "--no-wait", "--runs-namespace", e.runsNS); err != nil {
		e.t.Fatalf("install the demo's 1.0.0: %v\n%s", err, out)
	}
	return dir
}

// demoManagerImage is the image the demo's controller-manager runs.
func (e *env) demoManagerImage() string {
	e.t.Helper()
	d, err := e.cs.AppsV1().Deployments("demo-system").Get(e.ctx, "demo-controller-manager", metaGet)
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}
