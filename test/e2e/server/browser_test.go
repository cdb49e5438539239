package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// The browser tests (TestBrowser*) drive the web UI in a headless
// Chromium against the real `upshift serve` on the package's local
// cluster, as an operator would: they sign in, click through the wizard,
// read what the page shows (data-testid selectors, browsertest's
// selectors.go) and save a screenshot of each step, into
// $UPSHIFT_SCREENSHOTS when it is set (docs/screenshots holds the key
// ones), else a temporary directory. Without Chromium they are skipped
// (browsertest.SkipMessage).

// uiWait bounds what a test waits for in the page: a hop on the local
// cluster takes seconds, on a loaded machine tens of seconds.
const uiWait = 4 * time.Minute

// ui is a Chromium tab on a server.
type ui struct {
	t     *testing.T
	s     *server
	b     *browsertest.Browser
	shots string
}

// browser opens a tab that trusts the server's self-signed certificate by
// its public key alone (browsertest.TrustCertificate: a SPKI pin, so no
// other certificate error is ignored), in a 1280×800 viewport.
func (e *env) browser(s *server) *ui {
	e.t.Helper()
	b := browsertest.New(e.t, browsertest.TrustCertificate(s.cert), browsertest.Lifetime(12*time.Minute))
	dir := os.Getenv("UPSHIFT_SCREENSHOTS")
	if dir == "" {
		dir = e.t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	u := &ui{t: e.t, s: s, b: b, shots: dir}
	// Reduced motion: no progress bar half-way through its transition
	// nor a spinner mid-turn in a screenshot.
	u.do(chromedp.EmulateViewport(1280, 800),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}))
	return u
}

// do runs actions, each batch bounded to a minute.
func (u *ui) do(actions ...chromedp.Action) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.b.Ctx, time.Minute)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		u.fail("%v", err)
	}
}

// fail ends the test with what the page and the server said.
func (u *ui) fail(format string, args ...any) {
	u.t.Helper()
	var page string
	ctx, cancel := context.WithTimeout(u.b.Ctx, 10*time.Second)
	defer cancel()
	_ = chromedp.Run(ctx, chromedp.Evaluate(`location.hash + '\n' + (document.getElementById('main')?.innerText || '')`, &page))
	if len(page) > 6000 {
		page = page[:6000] + "…"
	}
	u.t.Fatalf("%s\nthe page shows:\n%s\nthe page's problems: %q\nserver log:\n%s", fmt.Sprintf(format, args...), page, u.b.Problems(), u.s.log)
}

// eval evaluates a JavaScript expression into out.
func (u *ui) eval(expr string, out any) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, browsertest.Eval(expr, out)); err != nil {
		u.fail("evaluate %s: %v", expr, err)
	}
}

// until waits until a JavaScript expression is true.
func (u *ui) until(what, expr string) {
	u.t.Helper()
	deadline := time.Now().Add(uiWait)
	for {
		var ok bool
		ctx, cancel := context.WithTimeout(u.b.Ctx, 30*time.Second)
		err := chromedp.Run(ctx, browsertest.Eval(`!!(`+expr+`)`, &ok))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			u.fail("%s: not seen in %s (%s; last error %v)", what, uiWait, expr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// q is a JavaScript string literal of a selector.
func q(sel string) string {
	b, _ := json.Marshal(sel)
	return string(b)
}

// text is the visible text of the first element sel selects ("" when
// none).
func (u *ui) text(sel string) string {
	u.t.Helper()
	var s string
	u.eval(`document.querySelector(`+q(sel)+`)?.innerText ?? ''`, &s)
	return s
}

// texts are the visible texts of every element sel selects.
func (u *ui) texts(sel string) []string {
	u.t.Helper()
	var s []string
	u.eval(`[...document.querySelectorAll(`+q(sel)+`)].map((el) => el.innerText)`, &s)
	return s
}

// attrs are an attribute of every element sel selects.
func (u *ui) attrs(sel, name string) []string {
	u.t.Helper()
	var s []string
	u.eval(`[...document.querySelectorAll(`+q(sel)+`)].map((el) => el.getAttribute(`+q(name)+`) ?? '')`, &s)
	return s
}

// visible: sel selects an element that is displayed.
func visible(sel string) string {
	return `(() => { const el = document.querySelector(` + q(sel) + `); return !!el && !el.closest('[hidden]') && el.getClientRects().length > 0; })()`
}

// click clicks the element sel selects once it is displayed and enabled.
func (u *ui) click(sel string) {
	u.t.Helper()
	u.until("an enabled "+sel, visible(sel)+` && !document.querySelector(`+q(sel)+`).disabled`)
	u.do(chromedp.Click(sel, chromedp.ByQuery))
}

// typeIn types into the input sel selects, replacing its value.
func (u *ui) typeIn(sel, value string) {
	u.t.Helper()
	var ok bool
	u.do(chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(`(document.querySelector(`+q(sel)+`).value = '') === ''`, &ok),
		chromedp.SendKeys(sel, value, chromedp.ByQuery))
}

// shot saves a screenshot of the viewport as name.png, scrolled to the
// top, or with the element sel selects at the top when it is given.
func (u *ui) shot(name, sel string) {
	u.t.Helper()
	var ok bool
	u.eval(`(() => { const el = `+q(sel)+` && document.querySelector(`+q(sel)+`);
	  window.scrollTo(0, el ? el.getBoundingClientRect().top + window.scrollY - 16 : 0); return true; })()`, &ok)
	// Let the browser paint what was rendered last.
	u.eval(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, &ok)
	path := filepath.Join(u.shots, name+".png")
	u.b.Screenshot(u.t, path)
	u.t.Logf("screenshot %s", path)
}

// accessible fails the test with the page's accessibility problems.
func (u *ui) accessible(where string) {
	u.t.Helper()
	for _, p := range u.b.Accessibility(u.t) {
		u.t.Errorf("%s: accessibility: %s", where, p)
	}
}

// login signs in on the login screen, as a user types the password.
func (u *ui) login(password string) {
	u.t.Helper()
	u.do(chromedp.Navigate(u.s.url+"/"), chromedp.WaitVisible(browsertest.LoginPassword, chromedp.ByQuery))
	u.accessible("login")
	u.do(chromedp.SendKeys(browsertest.LoginPassword, password, chromedp.ByQuery))
	u.click(browsertest.TestID("login-submit"))
	u.until("signed in", visible(browsertest.TestID("wizard-heading")))
	if role := u.text(browsertest.TestID("session-role")); role != "Signed in as admin" {
		u.t.Errorf("the header says %q after the admin signed in", role)
	}
}

// step waits until the wizard shows a step: its section, its heading and
// the stepper's item marked current, the ones before it done.
func (u *ui) step(id string) {
	u.t.Helper()
	u.until("the wizard's step "+id, visible(browsertest.Step(id))+
		` && document.querySelector(`+q(browsertest.TestID("wizard-step-heading"))+`)?.dataset.step === `+q(id)+
		` && document.querySelector(`+q(browsertest.Stepper(id))+`)?.dataset.status === 'current'`)
}

// value adds a key=value row to the Configuration's values.
func (u *ui) value(key, val string) {
	u.t.Helper()
	n := len(u.attrs(browsertest.TestID("value-key"), "id"))
	u.click(browsertest.TestID("value-add"))
	u.until("a new value row", fmt.Sprintf(`document.querySelectorAll(%s).length === %d`, q(browsertest.TestID("value-key")), n+1))
	ids := u.attrs(browsertest.TestID("value-key"), "id")
	u.typeIn("#"+ids[n], key)
	u.typeIn("#"+strings.Replace(ids[n], "value-key-", "value-value-", 1), val)
}

// configure fills the Configuration step and checks it: the target and
// values given, the server's catalog.
func (u *ui) configure(target string, values ...[2]string) {
	u.t.Helper()
	u.typeIn(browsertest.TargetVersion, target)
	for _, kv := range values {
		u.value(kv[0], kv[1])
	}
	u.click(browsertest.TestID("check"))
	u.until("the check's result", visible(browsertest.TestID("check-versions")))
}

// watchJS records, from now on, what the phase view shows as it changes
// (a MutationObserver, so no state is missed between two polls of the
// test): every timeline item's phases in order (keyed run/stage or
// run/stage/step), each run's phase, the progress bar's values, the components' states,
// the phase's state, the live-updates line and the errors shown.
const watchJS = `(() => {
  const seen = { items: {}, runs: {}, progress: [], components: {}, state: [], live: [], errors: [] };
  const push = (list, v) => { if (list[list.length - 1] !== v) list.push(v); };
  const record = () => {
    for (const el of document.querySelectorAll('[data-testid="timeline-stage"], [data-testid="timeline-step"], [data-testid="timeline-gate"]')) {
      const run = el.closest('[data-testid="timeline-run"]')?.dataset.run || '';
      const stage = el.closest('[data-testid="timeline-stage"]')?.dataset.name || '';
      const key = el.dataset.testid === 'timeline-stage' ? run + '/' + stage : run + '/' + stage + '/' + el.dataset.name;
      push(seen.items[key] ||= [], el.dataset.phase);
    }
    for (const el of document.querySelectorAll('[data-testid="timeline-run"]')) {
      const badge = el.querySelector('h4 .badge');
      if (badge) push(seen.runs[el.dataset.run] ||= [], badge.dataset.state);
    }
    const bar = document.querySelector('[data-testid="progress"]');
    if (bar) push(seen.progress, Number(bar.getAttribute('aria-valuenow')));
    for (const el of document.querySelectorAll('[data-testid="component"]')) push(seen.components[el.dataset.name] ||= [], el.dataset.state);
    const st = document.querySelector('[data-testid="phase-state"]');
    if (st) push(seen.state, st.dataset.state);
    const live = document.querySelector('[data-testid="live-state"]');
    if (live && live.textContent) push(seen.live, live.textContent);
    for (const el of document.querySelectorAll('[role="alert"]')) if (!el.hidden && el.textContent) push(seen.errors, el.textContent);
  };
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  record();
  window.__seen = seen;
  return true;
})()`

// seen is what watchJS recorded.
type seen struct {
	Items      map[string][]string `json:"items"`
	Runs       map[string][]string `json:"runs"`
	Progress   []int               `json:"progress"`
	Components map[string][]string `json:"components"`
	State      []string            `json:"state"`
	Live       []string            `json:"live"`
	Errors     []string            `json:"errors"`
}

func (u *ui) watch() {
	u.t.Helper()
	var ok bool
	u.eval(watchJS, &ok)
}

func (u *ui) seen() seen {
	u.t.Helper()
	var s seen
	u.eval(`window.__seen`, &s)
	return s
}

// runNotYet is the browser's line for a read of a run that does not
// exist yet: the phase view reads a hop's run when its turn comes, and
// the server may create it a moment later. The page shows nothing of it.
var runNotYet = regexp.MustCompile(`^log network: Failed to load resource: the server responded with a status of 404 \(\) \(https://[^/]+/api/runs/[^/]+\)$`)

// checkProblems fails the test with the page's console errors,
// exceptions and failed loads, but for runNotYet.
func (u *ui) checkProblems() {
	u.t.Helper()
	for _, p := range u.b.Problems() {
		if !runNotYet.MatchString(p) {
			u.t.Error(p)
		}
	}
}

// durationText is how the UI writes a duration (formatDuration).
var durationText = regexp.MustCompile(`^(\d+h \d\dm \d\ds|\d+m \d\ds|\d+s)$`)

// TestBrowserWizardUpgrade walks the wizard in Chromium against the real
// server and cluster: sign in; Welcome; Configuration (target 1.2.0,
// value approve=true, Check shows both hops and their previews; Start);
// Infrastructure upgrade, whose timeline, components and progress bar
// advance live while hop 1 and then hop 2 wait for an approval given with
// the Approve button, up to Succeeded; App preflights, the failing warning
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

	// Configuration: the check shows the two hops, each with its preview
	// (hop 1 creates the controller's Deployment).
	u.click(testID("wizard-start"))
	u.step("configuration")
	if u.attrs(testID("start-upgrade"), "disabled")[0] != "" {
		t.Error("Start upgrade is enabled before a check")
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

	// Infrastructure upgrade: followed live until hop 1 waits.
	u.click(testID("start-upgrade"))
	u.step("infra")
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
	u.accessible("Infrastructure upgrade")
	u.shot("wizard-3-infra-approval", "")
	u.click(approve1)

	approve2 := testID("approve") + `[data-run="` + hop2 + `"]`
	u.until("hop 2's Approve button", visible(approve2))
	u.click(approve2)
	u.until("the infrastructure upgraded", `document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Succeeded'`)
	u.until("the timeline's last step done", `document.querySelector('[data-testid="timeline-run"][data-run="`+hop2+`"] [data-testid="timeline-stage"][data-name="version"]')?.dataset.phase === 'Succeeded'`)

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
	if v := e.version(ns); v != "1.2.0" {
		t.Fatalf("the platform runs %s, want 1.2.0", v)
	}

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
	u.checkProblems()
	t.Logf("took %s", time.Since(start).Round(time.Second))
}

// TestBrowserFailureAndRollback: a hop whose controller crash-loops, with
// autoRollback off, fails and stops for an operator. The Infrastructure
// step shows what failed (the gate's message with the failing pod's log
// tail, in a <pre>) and the commands that apply: Roll back and Retry.
// Roll back puts the platform back (the run RolledBack, Retry offered);
// Retry starts the hop again (attempt 2), which fails the same way. The
// runs page and the run's detail show it, where Retry runs the failed
// step again.
func TestBrowserFailureAndRollback(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	start := time.Now()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	u := e.browser(s)
	run := ns + "-1.1.0"
	testID := browsertest.TestID
	runBadge := testID("timeline-run") + `[data-run="` + run + `"] h4 .badge`

	u.login(adminPassword)
	u.step("welcome")
	u.click(testID("wizard-start"))
	u.step("configuration")
	u.configure("1.1.0", [2]string{"broken", "1.1.0"}, [2]string{"autoRollback", "false"})
	u.click(testID("start-upgrade"))
	u.step("infra")
	u.watch()

	// The failure: its cause with the pod's log tail, and its commands.
	u.until("the failure panel", visible(testID("failure"))+` && document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Failed'`)
	u.until("the failed run in the timeline", `document.querySelector(`+q(runBadge)+`)?.dataset.state === 'Failed'`)
	var cause struct {
		Tag, Text string
	}
	u.eval(`(() => { const el = document.querySelector('[data-testid="failure-cause"]'); return { Tag: el.tagName, Text: el.textContent }; })()`, &cause)
	if cause.Tag != "PRE" || !strings.Contains(cause.Text, "CrashLoopBackOff") || !strings.Contains(cause.Text, "last log lines of pod "+ns+"/web-controller-") {
		t.Errorf("the failure's cause is a %s:\n%s\nwant a <pre> with CrashLoopBackOff and the pod's last log lines", cause.Tag, cause.Text)
	}
	if st := u.text(testID("phase-status")); !strings.Contains(st, "failed and was not rolled back") || strings.Contains(st, "last log lines") {
		t.Errorf("the status line reads %q: want the description's first line, saying the run was not rolled back", st)
	}
	actions := testID("failure-actions") + " button"
	if a := u.attrs(actions, "data-testid"); !slices.Equal(a, []string{"rollback", "retry", "new-target"}) {
		t.Errorf("the failure's commands: %q, want rollback, retry, new-target", a)
	}
	if c := u.attrs(browsertest.Progress("infra"), "class"); len(c) != 1 || !strings.Contains(c[0], "progress-failed") {
		t.Errorf("the progress bar's class: %q", c)
	}
	if st := u.attrs(testID("component")+`[data-name="controller"]`, "data-state"); !slices.Equal(st, []string{"Failed"}) {
		t.Errorf("the controller component: %q, want Failed", st)
	}
	u.accessible("a failed hop")
	u.shot("failure-log-tail", "")

	// Roll back: the run is RolledBack, the platform at 1.0.0 again, and
	// Retry is what applies now.
	u.click(testID("rollback") + `[data-run="` + run + `"]`)
	u.until("the run rolled back", `document.querySelector(`+q(runBadge)+`)?.dataset.state === 'RolledBack'`)
	u.until("the status saying so", `document.querySelector('[data-testid="phase-status"]')?.textContent.includes('was rolled back, restore verified')`)
	u.until("Retry alone", `[...document.querySelectorAll(`+q(actions)+`)].map((b) => b.dataset.testid).join() === 'retry,new-target'`)
	if m := u.text(testID("failure-message")); m != "rolled back controller; restore verified" {
		t.Errorf("the failure's latest message reads %q, want what the rollback did", m)
	}
	if v := e.version(ns); v != "1.0.0" {
		t.Errorf("the platform runs %s after the rollback, want 1.0.0", v)
	}
	if _, err := e.cs.AppsV1().Deployments(ns).Get(e.ctx, "web-controller", metaGet); err == nil {
		t.Error("the rollback left the controller's Deployment the hop created")
	}
	u.shot("failure-rolled-back", "")

	// Retry: the hop runs again and fails again.
	u.click(testID("retry") + `[data-run="` + run + `"]`)
	u.until("the retry running", `window.__seen.state.slice(-2).join() === 'Failed,Running' || window.__seen.state.slice(-3).join() === 'Failed,Running,Failed'`)
	u.until("the retry failed", `document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Failed' && document.querySelector(`+q(runBadge)+`)?.dataset.state === 'Failed'`)
	u.until("its commands", `[...document.querySelectorAll(`+q(actions)+`)].map((b) => b.dataset.testid).join() === 'rollback,retry,new-target'`)
	w := u.seen()
	t.Logf("seen: %+v", w)
	if len(w.Errors) > 0 {
		t.Errorf("errors shown: %q", w.Errors)
	}
	if !isSubsequence([]string{"Failed", "RolledBack", "Failed"}, w.Runs[run]) {
		t.Errorf("the run's phase in the timeline went %q: want Failed, RolledBack, then Failed again (the retry)", w.Runs[run])
	}

	// The runs page and the run's detail: Failed, attempt 2, its
	// duration, the cause and the commands.
	u.click(testID("nav-runs"))
	u.until("the run", `document.querySelector('[data-testid="run-row"]')?.dataset.phase === 'Failed'`)
	if d := u.texts(testID("run-row") + " td:last-child"); len(d) != 1 || !durationText.MatchString(d[0]) {
		t.Errorf("the run's duration reads %q", d)
	}
	u.click(testID("run-row") + ` a`)
	u.until("run "+run, visible(testID("run-phase")))
	sum := u.text(testID("run-summary"))
	for _, want := range []string{`Phase\s+✗\s+Failed`, `Attempt\s+2`, `Duration\s+\d+s`, `Version\s+1\.0\.0 → 1\.1\.0`} {
		if !regexp.MustCompile(want).MatchString(sum) {
			t.Errorf("the run's summary does not match %s:\n%s", want, sum)
		}
	}
	if c := u.text(testID("run-failure") + " pre"); !strings.Contains(c, "last log lines") {
		t.Errorf("the run's failure: %q", c)
	}
	if a := u.attrs(testID("run-actions")+" button", "data-testid"); !slices.Equal(a, []string{"rollback", "retry"}) {
		t.Errorf("the run's commands: %q", a)
	}
	u.accessible("a failed run's detail")
	u.shot("run-failed", "")

	// Retry here: the failed step runs again (its attempt count goes up)
	// and fails again, seen live.
	step := testID("timeline-step") + `[data-name="controller"]`
	before := u.text(step + " .tl-attempts")
	u.click(testID("run-actions") + " " + testID("retry"))
	u.until("the step retried", `(() => { const el = document.querySelector(`+q(step)+`);
	  return el?.dataset.phase === 'Failed' && (el.querySelector('.tl-attempts')?.textContent || '') !== `+q(before)+`; })()`)
	u.until("the run failed again", `document.querySelector('[data-testid="run-phase"]')?.dataset.state === 'Failed' &&
	  [...document.querySelectorAll('[data-testid="run-actions"] button')].map((b) => b.dataset.testid).join() === 'rollback,retry'`)
	t.Logf("the step's attempts: %q, then %q", before, u.text(step+" .tl-attempts"))
	u.checkProblems()
	t.Logf("took %s", time.Since(start).Round(time.Second))
}

// isSubsequence says sub's items are in list, in order.
func isSubsequence(sub, list []string) bool {
	for _, x := range list {
		if len(sub) > 0 && x == sub[0] {
			sub = sub[1:]
		}
	}
	return len(sub) == 0
}
