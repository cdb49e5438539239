package server_test

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// The wizard's steps with an infrastructure upgrade, in embedded-cluster's
// order (phaseOrder): the host preflights between the Configuration and
// the infrastructure upgrade.
var infraSteps = []string{"stepper-welcome", "stepper-configuration", "stepper-host-preflights", "stepper-infra",
	"stepper-app-preflights", "stepper-app-upgrade", "stepper-done"}

// hostPreflightTitles are the host preflights' checks (hostchecks.go).
var hostPreflightTitles = []string{"Nodes Ready", "Node pressure", "Nodes schedulable"}

// throughHostPreflights goes from a checked Configuration to the Host
// preflights step (Next): the stepper lists it before the infrastructure
// upgrade and marks it current; on a healthy cluster every check is
// listed with its message and none fails; the step says what the start
// sends (target); Start upgrade, enabled without any box to tick, starts
// the upgrade. shot names the step's screenshot ("": none).
func throughHostPreflights(t *testing.T, u *ui, target, shot string) {
	t.Helper()
	testID := browsertest.TestID
	u.click(testID("configuration-next"))
	u.step("host-preflights")
	if steps := u.attrs("nav[aria-label='Upgrade steps'] li", "data-testid"); !slices.Equal(steps, infraSteps) {
		t.Errorf("the stepper lists %q, want %q", steps, infraSteps)
	}
	if cur := u.attrs(`nav [aria-current="step"]`, "data-testid"); !slices.Equal(cur, []string{"stepper-host-preflights"}) {
		t.Errorf("aria-current=step on %q", cur)
	}
	u.until("the host preflights passed", `document.querySelector('[data-testid="host-preflights-state"]')?.dataset.state === 'Succeeded'`)
	listed := append(u.texts(browsertest.PreflightGroup("pass")+" "+testID("preflight-item")),
		u.texts(browsertest.PreflightGroup("warn")+" "+testID("preflight-item"))...)
	for _, title := range hostPreflightTitles {
		if !slices.ContainsFunc(listed, func(s string) bool { return strings.HasPrefix(s, title+": ") && len(s) > len(title)+2 }) {
			t.Errorf("host preflight %q with its message is not listed: %q", title, listed)
		}
	}
	if fail := u.texts(browsertest.PreflightGroup("fail") + " " + testID("preflight-item")); len(fail) != 0 {
		t.Errorf("host preflights failed on a healthy cluster: %q", fail)
	}
	if req := u.text(testID("host-preflights-request")); !strings.Contains(req, target) {
		t.Errorf("the step says the start sends %q, want target %s", req, target)
	}
	var ignoreShown bool
	u.eval(visible(browsertest.IgnoreHostPreflights), &ignoreShown)
	if ignoreShown {
		t.Error("the box to ignore failed host preflights shows when none failed")
	}
	u.accessible("Host preflights")
	if shot != "" {
		u.shot(shot, "")
	}
	u.click(testID("start-upgrade"))
	u.step("infra")
}

// ecBar is the infrastructure status as the page reads it (GET
// .../infra/status with the session's token) next to the progress bar.
type ecBar struct {
	Components, Succeeded int
	State, Description    string
	Now, Text             string
}

const ecBarJS = `(async () => {
  const token = JSON.parse(sessionStorage.getItem('upshift.session')).token;
  const res = await fetch('/api/linux/upgrade/infra/status', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
  const st = await res.json();
  await new Promise((r) => setTimeout(r, 2500)); // a poll of the page's
  const bar = document.querySelector('#infra-progress');
  return {
    Components: st.components.length,
    Succeeded: st.components.filter((c) => c.status.state === 'Succeeded').length,
    State: st.status.state, Description: st.status.description,
    Now: bar.getAttribute('aria-valuenow'),
    Text: document.querySelector('[data-testid="progress-label"]').textContent,
  };
})()`

// checkECProgress checks, while the infrastructure phase stands still (an
// approval waits), the progress bar against the components
// infra/status answers: embedded-cluster's round(100 × Succeeded /
// components), with the status's description as its text. It answers
// the value.
func checkECProgress(t *testing.T, u *ui) int {
	t.Helper()
	var b ecBar
	want := -1
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		u.eval(ecBarJS, &b)
		if b.Components == 0 {
			t.Fatalf("infra/status has no component: %+v", b)
		}
		want = int(math.Round(100 * float64(b.Succeeded) / float64(b.Components)))
		if b.State == "Succeeded" {
			want = 100
		}
		if b.Now == strconv.Itoa(want) {
			break
		}
	}
	if b.Now != strconv.Itoa(want) {
		t.Errorf("the progress bar reads %s: want %d, round(100 × %d Succeeded / %d components) (%+v)", b.Now, want, b.Succeeded, b.Components, b)
	}
	if d := strings.SplitN(b.Description, "\n", 2)[0]; !strings.HasSuffix(b.Text, ": "+d) {
		t.Errorf("the progress bar's text %q does not end with the status's description %q", b.Text, d)
	}
	return want
}

// openLogs opens the infrastructure phase's logs panel and checks it
// shows the status's logs (a stage's lines, want), then closes it.
func openLogs(t *testing.T, u *ui, want string) {
	t.Helper()
	testID := browsertest.TestID
	u.click(testID("logs") + " > summary")
	u.until("the logs shown", visible(testID("logs-text")))
	if logs := u.text(testID("logs-text")); !strings.Contains(logs, want) {
		t.Errorf("the logs panel shows %q, want a line %q", logs, want)
	}
	u.click(testID("logs") + " > summary")
}

// progressSteps says every value the bar showed is a share of n
// components, round(100 × k / n), as embedded-cluster computes it.
func progressSteps(values []int, n int) bool {
	for _, v := range values {
		ok := false
		for k := 0; k <= n; k++ {
			ok = ok || int(math.Round(100*float64(k)/float64(n))) == v
		}
		if !ok {
			return false
		}
	}
	return true
}

// withBrowser says the test drives Chromium too: there is one, or
// $UPSHIFT_REQUIRE_CHROMIUM fails the test without it.
func withBrowser(t *testing.T) bool {
	if browsertest.Path() == "" && os.Getenv("UPSHIFT_REQUIRE_CHROMIUM") == "" {
		t.Log("no chromium: the wizard's part is skipped")
		return false
	}
	browsertest.Require(t)
	return true
}

// isDisabled says the element sel selects is disabled.
func isDisabled(u *ui, sel string) bool {
	u.t.Helper()
	var d bool
	u.eval(`!!document.querySelector(`+q(sel)+`)?.disabled`, &d)
	return d
}

// checkHostFailure: the step shows the host preflights Failed, node-1
// named under Failed, and Start upgrade disabled.
func checkHostFailure(t *testing.T, u *ui) {
	t.Helper()
	testID := browsertest.TestID
	u.until("the host preflights failed", `document.querySelector('[data-testid="host-preflights-state"]')?.dataset.state === 'Failed'`)
	if fail := u.texts(browsertest.PreflightGroup("fail") + " " + testID("preflight-item")); len(fail) != 1 || !strings.Contains(fail[0], "Nodes Ready: not Ready: node-1") {
		t.Errorf("the failed host preflights listed: %q, want Nodes Ready naming node-1", fail)
	}
	if h := u.text(browsertest.PreflightGroup("fail") + " h3"); !strings.Contains(h, "Failed (1)") {
		t.Errorf("the failures' heading: %q", h)
	}
	if !isDisabled(u, testID("start-upgrade")) {
		t.Error("Start upgrade is enabled while a host preflight fails")
	}
}

// hostPreflightsBlocked: on a server that does not allow ignoring them,
// the wizard opens at the Host preflights (the server's state,
// HostPreflightsFailed, read from host-preflights/status) with the
// failure and Start disabled, no box to tick, the notice saying why; run
// again from the Configuration (Back, Check, Next) and with Run again,
// they fail the same way. A node that turns NotReady between checks that
// passed and the start: the start's own checks refuse it (400), and the
// step shows the server's message.
func hostPreflightsBlocked(t *testing.T, e *env, s *server, c *localcluster.Cluster) {
	u := e.browser(s)
	testID := browsertest.TestID
	u.login(adminPassword)
	u.step("host-preflights")
	checkHostFailure(t, u)
	var shown bool
	u.eval(visible(browsertest.IgnoreHostPreflights), &shown)
	if shown {
		t.Error("the box to ignore the failures shows on a server that does not allow it")
	}
	u.until("the blocking notice", visible(testID("host-preflights-blocking")))
	if req := u.text(testID("host-preflights-request")); !strings.Contains(req, "the server's target") {
		t.Errorf("after a reload the start sends %q, want the server's target", req)
	}
	u.accessible("Failed host preflights")
	u.shot("wizard-2b-host-preflights-failed", testID("host-preflights-status"))

	u.click(testID("wizard-back"))
	u.step("configuration")
	u.configure("1.1.0")
	u.click(testID("configuration-next"))
	u.step("host-preflights")
	checkHostFailure(t, u)
	if req := u.text(testID("host-preflights-request")); !strings.Contains(req, "1.1.0") {
		t.Errorf("from the Configuration the start sends %q, want 1.1.0", req)
	}
	u.click(testID("run-host-preflights"))
	checkHostFailure(t, u)

	if err := c.SetNodeReady(e.ctx, "node-1", true); err != nil {
		t.Fatal(err)
	}
	u.click(testID("run-host-preflights"))
	u.until("the host preflights passed", `document.querySelector('[data-testid="host-preflights-state"]')?.dataset.state === 'Succeeded'`)
	if err := c.SetNodeReady(e.ctx, "node-1", false); err != nil {
		t.Fatal(err)
	}
	u.click(testID("start-upgrade"))
	u.until("the start refused", visible(testID("host-preflights-error")))
	if msg := u.text(testID("host-preflights-error")); !strings.Contains(msg, "preflight checks failed: Nodes Ready: not Ready: node-1") {
		t.Errorf("the refused start shows %q, want the server's message", msg)
	}
	u.step("host-preflights")
	u.shot("wizard-2b-host-preflights-refused", testID("host-preflights-status"))
	u.click(testID("run-host-preflights"))
	checkHostFailure(t, u)
	for _, p := range u.b.Problems() {
		// The refused start's 400 is the page's to show, not a problem.
		if !strings.Contains(p, "status of 400") {
			t.Error(p)
		}
	}
}

// hostPreflightsIgnored: on a server that allows it, the box shows; Start
// is disabled until it is ticked, and then starts the upgrade past the
// failures.
func hostPreflightsIgnored(t *testing.T, e *env, s *server) {
	u := e.browser(s)
	testID := browsertest.TestID
	u.login(adminPassword)
	u.step("host-preflights")
	checkHostFailure(t, u)
	u.until("the box to ignore the failures", visible(browsertest.IgnoreHostPreflights))
	var blocking bool
	u.eval(visible(testID("host-preflights-blocking")), &blocking)
	if blocking {
		t.Error("the blocking notice shows on a server that allows ignoring the failures")
	}
	u.click(browsertest.IgnoreHostPreflights)
	u.until("Start enabled by the box", `!document.querySelector('[data-testid="start-upgrade"]').disabled`)
	if b := u.text(testID("start-upgrade")); b != "Start upgrade, ignoring the failures" {
		t.Errorf("Start reads %q with the box ticked", b)
	}
	u.accessible("Host preflights ignored")
	u.shot("wizard-2b-host-preflights-ignored", testID("host-preflights-status"))
	u.click(testID("start-upgrade"))
	u.step("infra")
	u.until("the infrastructure phase started", `['Running', 'Succeeded'].includes(document.querySelector('[data-testid="phase-state"]')?.dataset.state)`)
	u.checkProblems()
}
