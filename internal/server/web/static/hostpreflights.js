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

// request: what Start sends; run: run the checks on arriving (else read
// their last results); onBack: to the Configuration; onStarted: once the
// infrastructure upgrade started (or, for a viewer, to follow it).
export function hostPreflightsStep({ request, run, onBack, onStarted }) {
  const admin = session.isAdmin();
  let res = null;
  let skipped = ''; // the server's refusal to run them here (409)
  let timer = null;
  let disposed = false;
  let lastState = '';

  const err = errorBox({ dataset: { testid: 'host-preflights-error' } });
  const statusLine = h('p', { class: 'status-line', dataset: { testid: 'host-preflights-status' } }, 'Loading…');
  const skippedNote = h('p', { class: 'notice', hidden: true, dataset: { testid: 'host-preflights-skipped' } });
  const groups = h('div', { class: 'preflight-groups', 'aria-live': 'polite' });
  const ignore = h('input', { type: 'checkbox', id: 'ignore-host-preflights', dataset: { testid: 'ignore-host-preflights' } });
  const ignoreField = h('div', { class: 'field field-check', hidden: true },
    ignore, h('label', { for: 'ignore-host-preflights' }, 'Ignore the failed host preflights'));
  const blocking = h('p', { class: 'notice', hidden: true, dataset: { testid: 'host-preflights-blocking' } },
    'The server does not allow ignoring failed host preflights: fix what failed, then run them again.');
  const rerun = h('button', { type: 'button', hidden: !admin, dataset: { testid: 'run-host-preflights' } }, 'Run again');
  const back = h('button', { type: 'button', dataset: { testid: 'wizard-back' }, on: { click: () => onBack() } }, 'Back');
  const start = h('button', { type: 'button', class: 'primary', disabled: true, 'aria-describedby': 'host-start-help', dataset: { testid: admin ? 'start-upgrade' : 'wizard-next' } },
    admin ? 'Start upgrade' : 'Next');
  const startHelp = h('p', { class: 'help', id: 'host-start-help', dataset: { testid: 'host-start-help' } });
  ignore.addEventListener('change', render);

  async function runChecks() {
    setError(err, null);
    statusLine.replaceChildren(badge('Running'), ' Running the host preflights…');
    try {
      res = await busy(rerun, () => post(upgrade('host-preflights/run'), {}));
      skipped = '';
      ignore.checked = false;
    } catch (e) {
      if (e.statusCode !== 409) {
        setError(err, e);
        return;
      }
      // Not from this state (after an app upgrade): the start checks the
      // hosts itself, and refuses (400) when they fail.
      skipped = e.message;
    }
    render();
    if (res?.status?.state === 'Running') schedule();
  }
  rerun.addEventListener('click', runChecks);

  start.addEventListener('click', async () => {
    if (!admin) {
      onStarted();
      return;
    }
    setError(err, null);
    try {
      const gate = preflightsGate(res, ignore.checked, 'host');
      await busy(start, () => startInfra(request, gate.failed > 0 && ignore.checked));
      announce('Infrastructure upgrade started');
      onStarted();
    } catch (e) {
      // A 400 is the server's "preflight checks failed: …".
      setError(err, e);
      if (e.statusCode === 409) {
        err.append(h('button', { type: 'button', dataset: { testid: 'follow-running' }, on: { click: onStarted } }, 'Follow the running upgrade'));
      }
      render();
    }
  });

  const schedule = (ms = POLL_MS) => {
    clearTimeout(timer);
    if (!disposed) timer = setTimeout(poll, ms);
  };

  // poll reads the results while they run (after a reload while they
  // ran); they answer at once, so it rarely goes round.
  async function poll() {
    try {
      res = await get(upgrade('host-preflights/status'));
      setError(err, null);
      if (admin && run === 'if-pending' && (res?.status?.state || 'Pending') === 'Pending') {
        run = false;
        await runChecks();
        return;
      }
      render();
      if (res?.status?.state === 'Running') schedule();
    } catch (e) {
      if (!disposed) setError(err, e);
      schedule();
    }
  }

  function render() {
    if (disposed) return;
    skippedNote.hidden = !skipped;
    text(skippedNote, skipped ? `The host preflights did not run here (${skipped}): Start upgrade runs them itself and stops if they fail.` : '');
    if (!res && !skipped) return;
    const state = skipped ? 'Pending' : res.status?.state || 'Pending';
    const description = skipped ? 'Not run' : res.status?.description || '';
    statusLine.replaceChildren(badge(state, { dataset: { testid: 'host-preflights-state' } }), ' ', description || (state === 'Running' ? 'Running the host preflights…' : ''));
    if (state !== lastState) {
      announce(`Host preflights: ${humanize(state)}${description ? `, ${description}` : ''}`);
      lastState = state;
    }
    const gate = skipped ? { running: false, failed: 0, showIgnore: false, blocking: false, ready: true } : preflightsGate(res, ignore.checked, 'host');
    groups.replaceChildren(...(skipped ? [] : preflightGroups(res.output, gate.running)));
    ignoreField.hidden = !gate.showIgnore;
    blocking.hidden = !gate.blocking;
    if (ignoreField.hidden) ignore.checked = false;
    start.disabled = admin ? !gate.ready : false;
    rerun.disabled = gate.running;
    text(start, admin ? (gate.failed && gate.ready ? 'Start upgrade, ignoring the failures' : 'Start upgrade') : 'Next');
    text(startHelp, admin ? startHelpText(gate) : 'An admin starts the upgrade; Next follows it.');
  }

  function startHelpText(gate) {
    const to = request.targetVersion || 'the server\'s target';
    if (gate.running) return 'Wait for the host preflights.';
    if (gate.blocking) return 'A host preflight failed: the upgrade cannot start.';
    if (gate.failed && !gate.ready) return 'A host preflight failed: tick the box to start anyway.';
    if (!gate.ready) return 'Run the host preflights again: they did not pass.';
    return `Starts the upgrade to ${to}.`;
  }

  if (admin && run === true) runChecks();
  else schedule(0);
  return {
    el: h('div', {},
      h('h3', {}, 'What the upgrade starts with'),
      requestFacts(request),
      statusLine, err, skippedNote, groups, blocking, ignoreField,
      h('div', { class: 'wizard-nav' }, back, h('div', {}, rerun, ' ', start, startHelp))),
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
