// The wizard's App preflights step: the app plan's preflight and checks
// by severity (fail, warn, pass). They run once on entering when they
// never ran (as embedded-cluster's UI does); the app upgrade may start
// when nothing failed, or when the server allows ignoring the failures
// and the operator ticks the box.

import { h, text, badge, announce, busy, errorBox, setError } from './dom.js';
import { get, post, upgrade, session } from './api.js';
import { preflightsGate, humanize } from './model.js';

const POLL_MS = 2000;

const GROUPS = [
  { key: 'fail', title: 'Failed', icon: '✗' },
  { key: 'warn', title: 'Warnings', icon: '!' },
  { key: 'pass', title: 'Passed', icon: '✓' },
];

// preflightGroups shows preflight results (embedded-cluster's
// PreflightsOutput: {pass, warn, fail}) by severity, failures first,
// each with its title and message; the app's and the host's steps share
// it. running: the results are not in yet.
export function preflightGroups(out, running) {
  return GROUPS.map((g) => {
    const items = out?.[g.key] || [];
    return h('section', { class: ['preflight-group', `preflight-${g.key}`], 'aria-labelledby': `preflight-${g.key}-heading`, dataset: { testid: `preflight-${g.key}` } },
      h('h3', { id: `preflight-${g.key}-heading` }, h('span', { 'aria-hidden': 'true' }, `${g.icon} `), `${g.title} (${items.length})`),
      items.length
        ? h('ul', {}, items.map((it) => h('li', { dataset: { testid: 'preflight-item' } }, h('strong', {}, it.title || ''), it.message ? [': ', it.message] : '')))
        : h('p', { class: 'muted' }, running ? '…' : 'None.'));
  });
}

export function preflightsStep({ onStarted }) {
  const admin = session.isAdmin();
  let res = null;
  let timer = null;
  let disposed = false;
  let ran = false;
  let lastState = '';

  const err = errorBox({ dataset: { testid: 'preflights-error' } });
  const statusLine = h('p', { class: 'status-line', dataset: { testid: 'preflights-status' } }, 'Loading…');
  const groups = h('div', { class: 'preflight-groups' });
  const ignore = h('input', { type: 'checkbox', id: 'ignore-preflights', dataset: { testid: 'ignore-preflights' } });
  const ignoreField = h('div', { class: 'field field-check', hidden: true },
    ignore, h('label', { for: 'ignore-preflights' }, 'Ignore the failed preflights and upgrade the app anyway'));
  const blocking = h('p', { class: 'notice', hidden: true, dataset: { testid: 'preflights-blocking' } },
    'A blocking failure cannot be ignored: fix it, then run the preflights again.');
  const rerun = h('button', { type: 'button', hidden: !admin, dataset: { testid: 'run-preflights' } }, 'Run the preflights again');
  const next = h('button', { type: 'button', class: 'primary', disabled: true, dataset: { testid: 'wizard-next' } }, admin ? 'Start the app upgrade' : 'Next');
  ignore.addEventListener('change', render);

  rerun.addEventListener('click', async () => {
    try {
      res = await busy(rerun, () => post(upgrade('app-preflights/run'), {}));
      ignore.checked = false;
      render();
      schedule();
    } catch (e) {
      setError(err, e);
    }
  });

  next.addEventListener('click', async () => {
    if (!admin) {
      onStarted();
      return;
    }
    try {
      const fails = res?.output?.fail || [];
      await busy(next, () => post(upgrade('app/upgrade'), { ignoreAppPreflights: fails.length > 0 && ignore.checked }));
      announce('App upgrade started');
      onStarted();
    } catch (e) {
      setError(err, e);
    }
  });

  const schedule = (ms = POLL_MS) => {
    clearTimeout(timer);
    if (!disposed) timer = setTimeout(poll, ms);
  };

  async function poll() {
    try {
      res = await get(upgrade('app-preflights/status'));
      setError(err, null);
      if (admin && !ran && (res?.status?.state || 'Pending') === 'Pending') {
        ran = true;
        res = await post(upgrade('app-preflights/run'), {});
      }
      render();
    } catch (e) {
      if (!disposed) setError(err, e);
    }
    schedule();
  }

  function render() {
    if (!res || disposed) return;
    const state = res.status?.state || 'Pending';
    const description = res.status?.description || '';
    statusLine.replaceChildren(badge(state), ' ', description || (state === 'Running' ? 'Running the preflights…' : ''));
    if (state !== lastState) {
      announce(`App preflights: ${humanize(state)}${description ? `, ${description}` : ''}`);
      lastState = state;
    }
    const out = res.output || {};
    const running = state === 'Running' || state === 'Pending';
    groups.replaceChildren(...preflightGroups(out, running));
    const gate = preflightsGate(res, ignore.checked);
    ignoreField.hidden = !gate.showIgnore;
    blocking.hidden = !gate.blocking;
    if (ignoreField.hidden) ignore.checked = false;
    const { ready } = gate;
    next.disabled = !ready;
    rerun.disabled = running;
    text(next, admin ? (gate.failed && ready ? 'Start the app upgrade, ignoring the failures' : 'Start the app upgrade') : 'Next');
  }

  schedule(0);
  return {
    el: h('div', {}, statusLine, err, groups, blocking, ignoreField,
      h('div', { class: 'wizard-nav' }, rerun, next)),
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
