package server_test

import (
	"regexp"
)

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
