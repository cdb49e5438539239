package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// TestBrowserWizardUpgrade walks the wizard in Chromium against the real
// server and cluster: sign in; Welcome; Configuration (target 1.2.0,
// value approve=true, Check shows both hops and their previews; Next);
// Host preflights (all pass, listed; Start upgrade); Infrastructure
// upgrade, whose timeline, components and progress bar (embedded-cluster's
// share of components Succeeded, checked against infra/status) advance
// live while hop 1 and then hop 2 wait for an approval given with the
// Approve button, its logs panel opened, up to Succeeded; App preflights, the failing warning
// check under Warnings; App upgrade; Done with every run's report. Then
// the runs page and a run's detail, with phases and durations.
func TestBrowserWizardUpgrade(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	start := time.Now()
	e := newEnv(t)
	ns, catalog, app := e.platform()
	s := e.serve("--catalog", catalog, "--app-plan", app)
	u := e.browser(s)
	hop1, hop2 := ns+"-1.1.0", ns+"-1.2.0"
	testID := browsertest.TestID

	// Welcome: the server's state.
	u.login(adminPassword)
	u.step("welcome")
	if w := u.text(testID("welcome-state")); !strings.Contains(w, "New") || !strings.Contains(w, catalog) {
		t.Errorf("Welcome shows %q: want the state New and the catalog %s", w, catalog)
	}
	u.accessible("Welcome")
	u.shot("wizard-1-welcome", "")

	wizardConfiguration(t, u, ns)
	wizardInfra(t, u, hop1, hop2)
	checkInfraSeen(t, u, hop1, hop2)
	if v := e.version(ns); v != "1.2.0" {
		t.Fatalf("the platform runs %s, want 1.2.0", v)
	}

	wizardApp(t, u, ns, hop1, hop2)
	checkRunsPage(t, u, ns, hop1, hop2)

	// Back to the wizard: it opens at Done (the server's state), where a
	// new upgrade starts; the platform is at 1.2.0 now.
	u.click(testID("nav-upgrade"))
	u.step("done")
	u.click(testID("new-upgrade"))
	u.step("configuration")
	u.configure("1.2.0")
	if v := u.text(testID("check-versions")); !strings.Contains(v, "1.2.0 → 1.2.0") || !strings.Contains(u.text(testID("no-infra-upgrade")), "at the target already") {
		t.Errorf("a check at the target says %q", v)
	}
	// No hop: embedded-cluster's rule hides the host preflights and the
	// infrastructure upgrade, and the upgrade starts from here.
	noInfra := []string{"stepper-welcome", "stepper-configuration", "stepper-app-preflights", "stepper-app-upgrade", "stepper-done"}
	if steps := u.attrs("nav[aria-label='Upgrade steps'] li", "data-testid"); !slices.Equal(steps, noInfra) {
		t.Errorf("the stepper without a hop lists %q, want %q", steps, noInfra)
	}
	if b := u.text(testID("configuration-next")); b != "Start upgrade" {
		t.Errorf("without a hop the Configuration's button reads %q, want Start upgrade", b)
	}
	u.checkProblems()
	t.Logf("took %s", time.Since(start).Round(time.Second))
}

// wizardConfiguration: the Configuration step, checked with target 1.2.0
// and value approve=true.
func wizardConfiguration(t *testing.T, u *ui, ns string) {
	testID := browsertest.TestID

	// Configuration: the check shows the two hops, each with its preview
	// (hop 1 creates the controller's Deployment).
	u.click(testID("wizard-start"))
	u.step("configuration")
	if u.attrs(testID("configuration-next"), "disabled")[0] != "" {
		t.Error("Next is enabled before a check")
	}
	u.configure("1.2.0", [2]string{"approve", "true"})
	if v := u.text(testID("check-versions")); !strings.Contains(v, "1.0.0 → 1.2.0") {
		t.Errorf("the check says %q, want 1.0.0 → 1.2.0", v)
	}
	if hops := u.attrs(testID("hop"), "data-to"); !slices.Equal(hops, []string{"1.1.0", "1.2.0"}) {
		t.Fatalf("hops shown: %q, want 1.1.0 and 1.2.0", hops)
	}
	if pv := u.texts(testID("hop") + " " + testID("plan-preview")); len(pv) != 2 || !strings.Contains(pv[0], "Deployment "+ns+"/web-controller") {
		t.Errorf("the hops' previews: %q", pv)
	}
	if a := u.attrs(testID("hop")+":first-child "+testID("preview-change"), "data-action"); len(a) == 0 || a[0] != "create" {
		t.Errorf("hop 1's changes: %q, want the controller created first", a)
	}
	u.accessible("Configuration")
	u.shot("wizard-2-configuration", browsertest.Step("configuration")+" fieldset")
}

// wizardInfra: the Host preflights step, then the Infrastructure upgrade
// step, each hop approved, up to Succeeded.
func wizardInfra(t *testing.T, u *ui, hop1, hop2 string) {
	testID := browsertest.TestID

	// Host preflights, then the infrastructure upgrade: followed live
	// until hop 1 waits.
	throughHostPreflights(t, u, "1.2.0", "wizard-2b-host-preflights")
	u.watch()
	approve1 := testID("approve") + `[data-run="` + hop1 + `"]`
	u.until("hop 1's Approve button", visible(approve1))
	if w := u.text(testID("waiting")); !strings.Contains(w, hop1) || !strings.Contains(w, "go-ahead") {
		t.Errorf("the waiting panel says %q", w)
	}
	if m := u.text(testID("waiting-message")); m != "the controller runs 1.1.0: approve to record it" {
		t.Errorf("the approval's message in the waiting panel: %q", m)
	}
	if st := u.text(testID("phase-status")); !strings.Contains(st, "Waiting for approval of step go-ahead") {
		t.Errorf("the status line says %q while hop 1 waits", st)
	}
	comps := u.attrs(testID("component"), "data-name")
	if len(comps) != 6 || comps[0] != "1.1.0: controller" || comps[5] != "1.2.0: version" {
		t.Errorf("components while hop 1 waits: %q", comps)
	}
	if st := u.attrs(testID("component")+`[data-name="1.2.0: controller"]`, "data-state"); len(st) != 1 || st[0] != "Pending" {
		t.Errorf("hop 2's controller while hop 1 waits: %q, want Pending", st)
	}
	// Hop 1's controller done of the six stages: 17%, as embedded-cluster
	// counts components; the logs say what ran.
	if p := checkECProgress(t, u); p != 17 {
		t.Errorf("the progress bar while hop 1 waits: %d, want 17 (1 of 6 components)", p)
	}
	openLogs(t, u, "[controller] controller: Succeeded")
	u.accessible("Infrastructure upgrade")
	u.shot("wizard-3-infra-approval", "")
	u.click(approve1)

	approve2 := testID("approve") + `[data-run="` + hop2 + `"]`
	u.until("hop 2's Approve button", visible(approve2))
	u.click(approve2)
	u.until("the infrastructure upgraded", `document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Succeeded'`)
	u.until("the timeline's last step done", `document.querySelector('[data-testid="timeline-run"][data-run="`+hop2+`"] [data-testid="timeline-stage"][data-name="version"]')?.dataset.phase === 'Succeeded'`)
}

// checkInfraSeen: what the Infrastructure upgrade step showed as it
// advanced, and at its end.
func checkInfraSeen(t *testing.T, u *ui, hop1, hop2 string) {
	testID := browsertest.TestID

	// What the page showed on the way, as it changed.
	w := u.seen()
	t.Logf("seen: %+v", w)
	for _, k := range []string{hop1 + "/go-ahead", hop1 + "/go-ahead/go-ahead", hop1 + "/version", hop2 + "/go-ahead/go-ahead"} {
		phases := w.Items[k]
		if len(phases) < 2 || phases[len(phases)-1] != "Succeeded" {
			t.Errorf("timeline item %s went through %q: want it seen before it succeeded, then Succeeded", k, phases)
		}
	}
	if p := w.Progress; len(p) < 3 || p[len(p)-1] != 100 || !slices.IsSorted(p) {
		t.Errorf("the progress bar went %v: want it to rise in three steps or more to 100, never back", p)
	}
	if !progressSteps(w.Progress, 6) {
		t.Errorf("the progress bar went %v: want shares of the 6 components, round(100 × k / 6)", w.Progress)
	}
	for _, name := range []string{"1.1.0: go-ahead", "1.2.0: go-ahead"} {
		if c := w.Components[name]; !slices.Equal(c, []string{"Pending", "Running", "Succeeded"}) {
			t.Errorf("component %s went %q: want Pending, Running (waiting for its approval), Succeeded", name, c)
		}
	}
	for _, run := range []string{hop1, hop2} {
		if !slices.Contains(w.Live, "Live updates of run "+run+": on") {
			t.Errorf("the live-updates line never said run %s's event stream was on: %q", run, w.Live)
		}
	}
	if len(w.Errors) > 0 {
		t.Errorf("errors shown: %q", w.Errors)
	}
	if st := u.attrs(testID("component"), "data-state"); len(st) != 6 || slices.ContainsFunc(st, func(s string) bool { return s != "Succeeded" }) {
		t.Errorf("components at the end: %q", st)
	}
	if v := u.attrs(browsertest.Progress("infra"), "aria-valuenow"); len(v) != 1 || v[0] != "100" {
		t.Errorf("the progress bar at the end: %q", v)
	}
	for _, el := range u.texts(testID("timeline-stage") + " > .tl-row .elapsed") {
		if !durationText.MatchString(el) {
			t.Errorf("a finished stage's elapsed time reads %q", el)
		}
	}
	if n := len(u.texts(testID("timeline-stage"))); n != 6 {
		t.Errorf("%d stages in the timeline, want 6", n)
	}
	u.shot("wizard-3-infra-succeeded", "")
}

// wizardApp: the App preflights and App upgrade steps, then Done.
func wizardApp(t *testing.T, u *ui, ns, hop1, hop2 string) {
	testID := browsertest.TestID

	// App preflights: the warning check that fails is a warning, the
	// rest pass; the app upgrade may start.
	u.click(testID("wizard-next"))
	u.step("app-preflights")
	u.until("the app preflights' results", `document.querySelector('[data-testid="preflights-status"] .badge')?.dataset.state === 'Succeeded'`)
	warn := u.texts(browsertest.PreflightGroup("warn") + " " + testID("preflight-item"))
	pass := u.texts(browsertest.PreflightGroup("pass") + " " + testID("preflight-item"))
	fail := u.texts(browsertest.PreflightGroup("fail") + " " + testID("preflight-item"))
	if len(warn) != 1 || !strings.Contains(warn[0], "not-there") || len(fail) != 0 || len(pass) < 2 {
		t.Errorf("app preflights: warn %q, fail %q, pass %q", warn, fail, pass)
	}
	if h := u.text(browsertest.PreflightGroup("warn") + " h3"); !strings.Contains(h, "Warnings (1)") {
		t.Errorf("the warnings' heading: %q", h)
	}
	u.accessible("App preflights")
	u.shot("wizard-4-app-preflights", "")

	// App upgrade, then Done with the reports of the three runs.
	u.click(testID("wizard-next"))
	u.step("app-upgrade")
	u.until("the app upgraded", `document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Succeeded' && document.querySelector('#app-progress')?.getAttribute('aria-valuenow') === '100'`)
	u.accessible("App upgrade")
	u.shot("wizard-5-app-upgrade", "")
	u.click(testID("wizard-next"))
	u.step("done")
	u.until("the reports", `(() => { const r = [...document.querySelectorAll('[data-testid="report"]')]; return r.length === 3 && r.every((el) => el.textContent.startsWith('# Upgrade report')); })()`)
	runs := u.attrs(testID("report"), "data-run")
	if !slices.Equal(runs, []string{hop1, hop2, ns + "-app"}) {
		t.Errorf("reports of %q", runs)
	}
	for i, r := range u.texts(testID("report")) {
		if !strings.Contains(r, "Succeeded") {
			t.Errorf("report %d does not say Succeeded:\n%s", i, r)
		}
	}
	u.accessible("Done")
	u.shot("wizard-6-done", "")
}

// checkRunsPage: the runs page and hop 1's detail.
func checkRunsPage(t *testing.T, u *ui, ns, hop1, hop2 string) {
	testID := browsertest.TestID

	// The runs page: the three runs, newest first, each Succeeded with a
	// duration; a run's detail.
	u.click(testID("nav-runs"))
	u.until("the runs", `document.querySelectorAll('[data-testid="run-row"]').length === 3`)
	if rows := u.attrs(testID("run-row"), "data-run"); !slices.Equal(rows, []string{ns + "-app", hop2, hop1}) {
		t.Errorf("runs listed: %q, want the newest first", rows)
	}
	if ph := u.attrs(testID("run-row"), "data-phase"); slices.ContainsFunc(ph, func(s string) bool { return s != "Succeeded" }) {
		t.Errorf("the runs' phases: %q", ph)
	}
	for _, d := range u.texts(testID("run-row") + " td:last-child") {
		if !durationText.MatchString(d) {
			t.Errorf("a run's duration reads %q", d)
		}
	}
	if ph := u.texts(testID("run-row") + " td:nth-of-type(3)"); len(ph) != 3 || !strings.Contains(ph[1], "Succeeded") {
		t.Errorf("the phase column reads %q", ph)
	}
	u.accessible("Runs")
	u.shot("runs", "")
	u.click(testID("run-row") + `[data-run="` + hop1 + `"] a`)
	u.until("run "+hop1, visible(testID("run-phase")))
	sum := u.text(testID("run-summary"))
	for _, want := range []string{"Succeeded", "1.0.0 → 1.1.0", "Duration"} {
		if !strings.Contains(sum, want) {
			t.Errorf("run %s's summary lacks %q:\n%s", hop1, want, sum)
		}
	}
	if st := u.attrs(testID("timeline-stage"), "data-phase"); !slices.Equal(st, []string{"Succeeded", "Succeeded", "Succeeded"}) {
		t.Errorf("run %s's stages: %q", hop1, st)
	}
	if a := u.texts(testID("timeline-step") + `[data-name="go-ahead"]`); len(a) != 1 {
		t.Errorf("run %s's approval step: %q", hop1, a)
	}
	// The diffs the run was started on, as the server kept them.
	kept := testID("run-kept-preview") + " " + testID("preview-change")
	u.until("the kept preview", `document.querySelectorAll('`+kept+`').length > 0`)
	if a := u.attrs(kept, "data-action"); len(a) == 0 || a[0] != "create" {
		t.Errorf("run %s's kept preview: actions %q, want the controller created first", hop1, a)
	}
	u.accessible("A run's detail")
	u.shot("run-detail", "")
}
