// The wizard's Host preflights step, embedded-cluster's linux-preflight
// phase before the infrastructure upgrade: the nodes' checks, run on
// arriving from the Configuration (POST .../host-preflights/run) or read
// after a reload (GET .../host-preflights/status), by severity; "Run
// again"; "Start upgrade" posts infra/upgrade with the request the
// Configuration chose. Failures block the start unless the server allows
// ignoring them and the operator ticks the box (ignoreHostPreflights).

import { h, text, badge, dl, announce, busy, errorBox, setError } from './dom.js';
import { get, post, upgrade, session } from './api.js';
import { preflightsGate, humanize } from './model.js';
import { preflightGroups } from './preflights.js';
import { startInfra } from './start.js';

const POLL_MS = 2000;

// requestFacts shows what Start sends, so a reload's (the server's
// target, no values) is seen for what it is.
function requestFacts(req) {
  const values = Object.entries(req.values || {});
  return dl([
    ['Target version', req.targetVersion || 'the server\'s target'],
    ['Catalog', req.catalog || 'the server\'s'],
    ['Values', values.length ? values.map(([k, v]) => `${k}=${v}`).join(', ') : 'none'],
    ['Allow a downgrade', req.allowDowngrade ? 'yes' : ''],
  ], { dataset: { testid: 'host-preflights-request' } });
}

// elements builds the step's parts; the step fills them.
function elements(admin, onBack) {
  const e = {
    err: errorBox({ dataset: { testid: 'host-preflights-error' } }),
    statusLine: h('p', { class: 'status-line', dataset: { testid: 'host-preflights-status' } }, 'Loading…'),
    skippedNote: h('p', { class: 'notice', hidden: true, dataset: { testid: 'host-preflights-skipped' } }),
    groups: h('div', { class: 'preflight-groups', 'aria-live': 'polite' }),
    ignore: h('input', { type: 'checkbox', id: 'ignore-host-preflights', dataset: { testid: 'ignore-host-preflights' } }),
    blocking: h('p', { class: 'notice', hidden: true, dataset: { testid: 'host-preflights-blocking' } },
      'The server does not allow ignoring failed host preflights: fix what failed, then run them again.'),
    rerun: h('button', { type: 'button', hidden: !admin, dataset: { testid: 'run-host-preflights' } }, 'Run again'),
    back: h('button', { type: 'button', dataset: { testid: 'wizard-back' }, on: { click: () => onBack() } }, 'Back'),
    start: h('button', { type: 'button', class: 'primary', disabled: true, 'aria-describedby': 'host-start-help', dataset: { testid: admin ? 'start-upgrade' : 'wizard-next' } },
      admin ? 'Start upgrade' : 'Next'),
    startHelp: h('p', { class: 'help', id: 'host-start-help', dataset: { testid: 'host-start-help' } }),
  };
  e.ignoreField = h('div', { class: 'field field-check', hidden: true },
    e.ignore, h('label', { for: 'ignore-host-preflights' }, 'Ignore the failed host preflights'));
  return e;
}

// startHelpText says why Start is (not) offered.
function startHelpText(gate, request, admin) {
  if (!admin) return 'An admin starts the upgrade; Next follows it.';
  if (gate.running) return 'Wait for the host preflights.';
  if (gate.blocking) return 'A host preflight failed: the upgrade cannot start.';
  if (gate.failed && !gate.ready) return 'A host preflight failed: tick the box to start anyway.';
  if (!gate.ready) return 'Run the host preflights again: they did not pass.';
  return `Starts the upgrade to ${request.targetVersion || 'the server\'s target'}.`;
}

// SKIPPED is the gate when the server would not run the checks here:
// the start runs them.
const SKIPPED = { running: false, failed: 0, showIgnore: false, blocking: false, ready: true };

// show fills the parts with the results (res) or the refusal to run
// them (skipped); it answers the state shown.
function show(e, res, skipped, admin, request) {
  e.skippedNote.hidden = !skipped;
  text(e.skippedNote, skipped ? `The host preflights did not run here (${skipped}): Start upgrade runs them itself and stops if they fail.` : '');
  const state = skipped ? 'Pending' : res.status?.state || 'Pending';
  const description = skipped ? 'Not run' : res.status?.description || '';
  e.statusLine.replaceChildren(badge(state, { dataset: { testid: 'host-preflights-state' } }), ' ', description || (state === 'Running' ? 'Running the host preflights…' : ''));
  const gate = skipped ? SKIPPED : preflightsGate(res, e.ignore.checked, 'host');
  e.groups.replaceChildren(...(skipped ? [] : preflightGroups(res.output, gate.running)));
  e.ignoreField.hidden = !gate.showIgnore;
  e.blocking.hidden = !gate.blocking;
  if (e.ignoreField.hidden) e.ignore.checked = false;
  e.start.disabled = admin ? !gate.ready : false;
  e.rerun.disabled = gate.running;
  text(e.start, admin ? (gate.failed && gate.ready ? 'Start upgrade, ignoring the failures' : 'Start upgrade') : 'Next');
  text(e.startHelp, startHelpText(gate, request, admin));
  return `${humanize(state)}${description ? `, ${description}` : ''}`;
}

// start posts infra/upgrade with the carried request, ignoring failed
// host preflights when the box is ticked; a refusal shows on the step (a
// 400 is the server's "preflight checks failed: …").
async function start(e, request, res, admin, onStarted) {
  if (!admin) {
    onStarted();
    return;
  }
  setError(e.err, null);
  try {
    const ignoring = preflightsGate(res, e.ignore.checked, 'host').failed > 0 && e.ignore.checked;
    await busy(e.start, () => startInfra(request, ignoring));
    announce('Infrastructure upgrade started');
    onStarted();
  } catch (err) {
    setError(e.err, err);
    if (err.statusCode === 409) {
      e.err.append(h('button', { type: 'button', dataset: { testid: 'follow-running' }, on: { click: onStarted } }, 'Follow the running upgrade'));
    }
  }
}

// request: what Start sends; run: true to run the checks on arriving,
// 'if-pending' to read their last results and run them if they never
// ran; onBack: to the Configuration; onStarted: once the infrastructure
// upgrade started (for a viewer: to follow it).
export function hostPreflightsStep({ request, run, onBack, onStarted }) {
  const admin = session.isAdmin();
  const e = elements(admin, onBack);
  let res = null;
  let skipped = ''; // the server's refusal to run them here (409)
  let timer = null;
  let disposed = false;
  let said = '';

  function render() {
    if (disposed || (!res && !skipped)) return;
    const now = show(e, res, skipped, admin, request);
    if (now !== said) announce(`Host preflights: ${now}`);
    said = now;
  }
  e.ignore.addEventListener('change', render);

  async function runChecks() {
    setError(e.err, null);
    e.statusLine.replaceChildren(badge('Running'), ' Running the host preflights…');
    try {
      res = await busy(e.rerun, () => post(upgrade('host-preflights/run'), {}));
      skipped = '';
      e.ignore.checked = false;
    } catch (err) {
      // 409: not from this state (after an app upgrade); the start
      // checks the hosts itself, and refuses (400) when they fail.
      if (err.statusCode !== 409) {
        setError(e.err, err);
        return;
      }
      skipped = err.message;
    }
    render();
    if (res?.status?.state === 'Running') schedule();
  }
  e.rerun.addEventListener('click', runChecks);

  e.start.addEventListener('click', () => start(e, request, res, admin, onStarted).finally(render));

  const schedule = (ms = POLL_MS) => {
    clearTimeout(timer);
    if (!disposed) timer = setTimeout(poll, ms);
  };

  // poll reads the results while they run (after a reload while they
  // ran); they answer at once, so it rarely goes round.
  async function poll() {
    try {
      res = await get(upgrade('host-preflights/status'));
      setError(e.err, null);
      if (admin && run === 'if-pending' && (res?.status?.state || 'Pending') === 'Pending') {
        run = false;
        await runChecks();
        return;
      }
      render();
      if (res?.status?.state === 'Running') schedule();
    } catch (err) {
      if (!disposed) setError(e.err, err);
      schedule();
    }
  }

  if (admin && run === true) runChecks();
  else schedule(0);
  return {
    el: h('div', {},
      h('h3', {}, 'What the upgrade starts with'),
      requestFacts(request),
      e.statusLine, e.err, e.skippedNote, e.groups, e.blocking, e.ignoreField,
      h('div', { class: 'wizard-nav' }, e.back, h('div', {}, e.rerun, ' ', e.start, e.startHelp))),
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
