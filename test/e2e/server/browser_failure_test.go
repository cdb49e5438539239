package server_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// TestBrowserFailureAndRollback: a hop whose controller crash-loops, with
// autoRollback off, fails and stops for an operator. The Infrastructure
// step shows what failed (the gate's message with the failing pod's log
// tail, in a <pre>) and the commands that apply: Roll back and Retry.
// Roll back puts the platform back (the run RolledBack, Retry offered);
// Retry starts the hop again (attempt 2), which fails the same way. The
// failed phase shows its support bundle: an admin downloads it, a viewer
// sees it without a link (checkSupportBundle). The runs page and the
// run's detail show it, where Retry runs the failed step again.
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
	throughHostPreflights(t, u, "1.1.0", "")
	u.watch()

	// The failure: its cause with the pod's log tail, and its commands.
	u.until("the failure panel", visible(testID("failure"))+` && document.querySelector('[data-testid="phase-state"]')?.dataset.state === 'Failed'`)
	u.until("the failed run in the timeline", `document.querySelector(`+q(runBadge)+`)?.dataset.state === 'Failed'`)
	actions := testID("failure-actions") + " button"
	checkFailurePanel(t, u, ns, actions)
	checkSupportBundle(t, e, s, u, run)

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

	checkFailedRunDetail(t, u, run)

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

// checkFailurePanel: the failure's cause with the pod's log tail, and its
// commands.
func checkFailurePanel(t *testing.T, u *ui, ns, actions string) {
	testID := browsertest.TestID
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
}

// checkFailedRunDetail: the runs page and the run's detail after the
// retry: Failed, attempt 2, its duration, the cause and the commands.
func checkFailedRunDetail(t *testing.T, u *ui, run string) {
	testID := browsertest.TestID
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
