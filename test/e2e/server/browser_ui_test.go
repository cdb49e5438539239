package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
