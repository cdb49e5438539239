// The wizard's Airgap bundle step, embedded-cluster's airgap-processing
// phase (shown when the server says isAirgap): the bundle processed
// (POST .../airgap/process, once on arriving when it never ran), its
// status and logs polled every 2 s (GET .../airgap/status: {status,
// logs}); after a failure an admin processes it again (the server
// allows it); Next once it succeeded. A server without these routes
// (404) has nothing to process: Next goes on.

import { h, text, badge, pre, announce, busy, errorBox, setError, disclosure } from './dom.js';
import { get, post, upgrade, session } from './api.js';
import { humanize } from './model.js';

const POLL_MS = 2000;

// helpText says why Next is (not) offered and what to do.
function helpText(state, admin) {
  switch (state) {
    case 'Succeeded':
      return 'The bundle\'s images and artifacts are in the registry: Next goes on.';
    case 'Failed':
      return admin
        ? 'Fix what the failure names (the bundle file or the registry), then process the bundle again.'
        : 'An admin fixes what the failure names and processes the bundle again.';
    case 'Running':
      return 'Next is offered once every image and artifact is pushed.';
    default:
      return admin ? 'The bundle is processed on arriving here.' : 'An admin processes the bundle.';
  }
}

// elements builds the step's parts; the step fills them.
function elements(admin) {
  return {
    err: errorBox({ dataset: { testid: 'airgap-error' } }),
    // Focused after Process again, whose button then hides.
    statusLine: h('p', { class: 'status-line', tabindex: '-1', dataset: { testid: 'airgap-status' } }, 'Loading…'),
    logs: pre('', { class: 'logs', dataset: { testid: 'airgap-logs' } }),
    retry: h('button', { type: 'button', hidden: true, dataset: { testid: 'airgap-retry' } }, 'Process again'),
    next: h('button', { type: 'button', class: 'primary', disabled: true, 'aria-describedby': 'airgap-help', dataset: { testid: 'wizard-next' } }, 'Next'),
    help: h('p', { class: 'help', id: 'airgap-help', dataset: { testid: 'airgap-help' } }, helpText('', admin)),
  };
}

// onNext goes on (it may start the upgrade: its errors show here).
export function airgapStep({ onNext }) {
  const admin = session.isAdmin();
  const e = elements(admin);
  let timer = null;
  let disposed = false;
  let ran = false;
  let lastState = '';

  e.next.addEventListener('click', async () => {
    setError(e.err, null);
    try {
      await busy(e.next, onNext);
    } catch (err) {
      setError(e.err, err);
    }
  });

  // Process again, after a failure (the admin's).
  e.retry.addEventListener('click', async () => {
    setError(e.err, null);
    try {
      const res = await busy(e.retry, () => post(upgrade('airgap/process'), {}));
      render(res);
      e.statusLine.focus();
      schedule();
    } catch (err) {
      setError(e.err, err);
    }
  });

  const schedule = (ms = POLL_MS) => {
    clearTimeout(timer);
    if (!disposed) timer = setTimeout(poll, ms);
  };

  async function poll() {
    let res;
    try {
      res = await get(upgrade('airgap/status'));
      if (admin && !ran && (res?.status?.state || 'Pending') === 'Pending') {
        ran = true;
        res = await post(upgrade('airgap/process'), {});
      }
      setError(e.err, null);
    } catch (err) {
      if (disposed) return;
      if (err.statusCode === 404) {
        // Not served (yet): no bundle to process.
        render({ status: { state: 'Succeeded', description: 'This server has no airgap bundle to process' } });
        return;
      }
      setError(e.err, err);
      schedule();
      return;
    }
    render(res);
    const state = res?.status?.state;
    if (state !== 'Succeeded' && state !== 'Failed') schedule();
  }

  function render(res) {
    if (disposed) return;
    const state = res?.status?.state || 'Pending';
    const description = res?.status?.description || '';
    e.statusLine.replaceChildren(badge(state, { dataset: { testid: 'airgap-state' } }), ' ', description);
    if (state !== lastState) {
      announce(`Airgap bundle: ${humanize(state)}${description ? `, ${description}` : ''}`);
      lastState = state;
    }
    if (e.logs.textContent !== (res?.logs || '')) text(e.logs, res?.logs || '');
    e.next.disabled = state !== 'Succeeded';
    e.retry.hidden = !admin || state !== 'Failed';
    text(e.help, helpText(state, admin));
  }

  schedule(0);
  return {
    el: h('div', { class: 'phase' }, e.statusLine, e.err,
      disclosure('airgap-logs', 'Logs', e.logs),
      h('div', { class: 'wizard-nav' }, e.retry, e.next, e.help)),
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
