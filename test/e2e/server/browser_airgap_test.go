package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/airgap/airgaptest"
	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// airgapSteps are the wizard's steps on an airgap server: the Airgap
// bundle between the Configuration and the host preflights (phaseOrder).
var airgapSteps = []string{"stepper-welcome", "stepper-configuration", "stepper-airgap", "stepper-host-preflights",
	"stepper-infra", "stepper-app-preflights", "stepper-app-upgrade", "stepper-done"}

// TestBrowserAirgap walks the wizard's Airgap bundle step in Chromium on
// an airgap server (a TLS registry on 127.0.0.1). A bundle with a
// corrupt blob: the step shows the failure naming the blob, Next stays
// disabled and Process again processes it again (failing the same way),
// nothing pushed nor moved on. The server restarted with a good bundle:
// the step processes it on arriving, its logs show every pushed ref,
// Next goes to the Host preflights, which pass (the server's airgap gate
// is open), and the registry holds each ref with the bundle's digest.
func TestBrowserAirgap(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	f := newAirgapFixture(t)
	s := f.e.serve(f.brokenFlags()...)
	browserAirgapFailed(t, f.e, s, f.reg, f.victim)
	s.kill()

	s = f.e.serve(f.goodFlags()...)
	browserAirgapProcessed(t, f.e, s, f.reg, f.good)
}

// airgapWatchJS records, from now on, every state the step's badge shows
// (a MutationObserver: a state shown between two reads of the test is
// not missed).
const airgapWatchJS = `(() => {
  const states = [];
  const record = () => {
    const st = document.querySelector('[data-testid="airgap-state"]')?.dataset.state;
    if (st && states[states.length - 1] !== st) states.push(st);
  };
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true });
  record();
  window.__airgap = states;
  return true;
})()`

// airgapState waits until the step's badge says state.
func airgapState(u *ui, state string) {
	u.t.Helper()
	u.until("the airgap bundle "+state, `document.querySelector('[data-testid="airgap-state"]')?.dataset.state === `+q(state))
}

// airgapLogs opens the step's logs panel and answers what it shows.
func airgapLogs(u *ui) string {
	u.t.Helper()
	testID := browsertest.TestID
	u.click(`details[data-key="airgap-logs"] > summary`)
	u.until("the airgap logs shown", visible(testID("airgap-logs")))
	return u.text(testID("airgap-logs"))
}

// browserAirgapFailed: from the Configuration, Next goes to the Airgap
// bundle step (after the Configuration in the stepper), which processes
// the corrupt bundle on arriving and shows it failed naming the blob,
// with Process again; that processes it again, which fails the same
// way; Next stays disabled, the wizard at the step, the registry empty.
func browserAirgapFailed(t *testing.T, e *env, s *server, reg *airgaptest.Registry, victim string) {
	testID := browsertest.TestID
	u := e.browser(s)
	u.login(adminPassword)
	u.step("welcome")
	u.click(testID("wizard-start"))
	u.step("configuration")
	u.configure("1.1.0")
	u.click(testID("configuration-next"))
	u.step("airgap")
	if steps := u.attrs("nav[aria-label='Upgrade steps'] li", "data-testid"); !slices.Equal(steps, airgapSteps) {
		t.Errorf("the stepper lists %q, want %q", steps, airgapSteps)
	}
	airgapState(u, "Failed")
	if st := u.text(testID("airgap-status")); !strings.Contains(st, "Airgap processing failed") || !strings.Contains(st, victim+" is corrupt") {
		t.Errorf("the failed step says %q, want the failure naming blob %s", st, victim)
	}
	if !isDisabled(u, testID("wizard-next")) {
		t.Error("Next is enabled after the processing failed")
	}
	if help := u.text(testID("airgap-help")); !strings.Contains(help, "process the bundle again") {
		t.Errorf("the step's help after a failure: %q", help)
	}
	if logs := airgapLogs(u); !strings.Contains(logs, "[airgap] failed: ") || !strings.Contains(logs, victim) {
		t.Errorf("the logs after the failure: %q, want the failure naming %s", logs, victim)
	}
	u.accessible("Airgap bundle failed")
	u.shot("wizard-1b-airgap-failed", testID("airgap-status"))

	// Process again: the server processes it again (Running, as its POST
	// answers), and it fails the same way.
	var ok bool
	u.eval(airgapWatchJS, &ok)
	u.click(testID("airgap-retry"))
	u.until("processed again and failed", `window.__airgap.join() === 'Failed,Running,Failed'`)
	if n := strings.Count(s.log.String(), "airgap processing: Airgap processing failed"); n != 2 {
		t.Errorf("the server processed the bundle %d times, want 2 (on arriving, then Process again)\nserver log:\n%s", n, s.log)
	}
	if st := u.text(testID("airgap-status")); !strings.Contains(st, victim+" is corrupt") {
		t.Errorf("processed again, the step says %q", st)
	}
	u.until("Process again offered again", visible(testID("airgap-retry")))
	u.step("airgap")
	if !isDisabled(u, testID("wizard-next")) {
		t.Error("Next is enabled after processing again failed")
	}
	if st := wizardState(s, s.login(adminPassword)); st.State != "AirgapProcessingFailed" {
		t.Errorf("the server's state: %+v, want AirgapProcessingFailed", st)
	}
	if repos := reg.Repositories(t); len(repos) != 0 {
		t.Errorf("a corrupt bundle pushed %q, want nothing", repos)
	}
	u.checkProblems()
}

// browserAirgapProcessed: the wizard opens at the Airgap bundle step (the
// server's state), processes the new bundle on arriving, shows it
// processed, no Process again, every ref pushed in its logs; Next goes
// to the Host preflights, which run and pass; the registry holds the
// bundle's digests.
func browserAirgapProcessed(t *testing.T, e *env, s *server, reg *airgaptest.Registry, good *airgaptest.Bundle) {
	testID := browsertest.TestID
	u := e.browser(s)
	u.login(adminPassword)
	u.step("airgap")
	airgapState(u, "Succeeded")
	if st := u.text(testID("airgap-status")); !strings.Contains(st, "Airgap bundle processed: 4 pushed to "+reg.Addr+"/mirror") {
		t.Errorf("the processed step says %q", st)
	}
	logs := airgapLogs(u)
	for ref := range good.Digests {
		if !strings.Contains(logs, "[airgap] pushed "+ref+" (") {
			t.Errorf("the logs do not show %s pushed:\n%s", ref, logs)
		}
	}
	var retry bool
	u.eval(visible(testID("airgap-retry")), &retry)
	if retry {
		t.Error("Process again shows after the processing succeeded")
	}
	u.accessible("Airgap bundle processed")
	u.shot("wizard-1b-airgap-processed", testID("airgap-status"))

	u.click(testID("wizard-next"))
	u.step("host-preflights")
	if st := u.attrs(browsertest.Stepper("airgap"), "data-status"); !slices.Equal(st, []string{"done"}) {
		t.Errorf("the stepper's Airgap bundle: %q, want done", st)
	}
	u.until("the host preflights passed", `document.querySelector('[data-testid="host-preflights-state"]')?.dataset.state === 'Succeeded'`)
	for ref, want := range good.Digests {
		if got := reg.Digest(t, "mirror/"+ref); got != want {
			t.Errorf("%s in the registry: %q, want the bundle's %s", ref, got, want)
		}
	}
	u.checkProblems()
}
