// The wizard's Airgap bundle step, embedded-cluster's airgap-processing
// phase (shown when the server says isAirgap): the bundle processed
// (POST .../airgap/process, once on arriving when it never ran), its
// status and logs polled every 2 s (GET .../airgap/status: {status,
// logs}); Next once it succeeded. A server without these routes (404)
// has nothing to process: Next goes on.

import { h, text, badge, pre, announce, busy, errorBox, setError, disclosure } from './dom.js';
import { get, post, upgrade, session } from './api.js';
import { humanize } from './model.js';

const POLL_MS = 2000;

// onNext goes on (it may start the upgrade: its errors show here).
export function airgapStep({ onNext }) {
  const admin = session.isAdmin();
  let timer = null;
  let disposed = false;
  let ran = false;
  let lastState = '';

  const err = errorBox({ dataset: { testid: 'airgap-error' } });
  const statusLine = h('p', { class: 'status-line', dataset: { testid: 'airgap-status' } }, 'Loading…');
  const logs = pre('', { class: 'logs', dataset: { testid: 'airgap-logs' } });
  const next = h('button', { type: 'button', class: 'primary', disabled: true, dataset: { testid: 'wizard-next' } }, 'Next');
  next.addEventListener('click', async () => {
    setError(err, null);
    try {
      await busy(next, onNext);
    } catch (e) {
      setError(err, e);
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
      setError(err, null);
    } catch (e) {
      if (disposed) return;
      if (e.statusCode === 404) {
        // Not served (yet): no bundle to process.
        render({ status: { state: 'Succeeded', description: 'This server has no airgap bundle to process' } });
        return;
      }
      setError(err, e);
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
    statusLine.replaceChildren(badge(state, { dataset: { testid: 'airgap-state' } }), ' ', description);
    if (state !== lastState) {
      announce(`Airgap bundle: ${humanize(state)}${description ? `, ${description}` : ''}`);
      lastState = state;
    }
    if (logs.textContent !== (res?.logs || '')) text(logs, res?.logs || '');
    next.disabled = state !== 'Succeeded';
  }

  schedule(0);
  return {
    el: h('div', { class: 'phase' }, statusLine, err,
      disclosure('airgap-logs', 'Logs', logs),
      h('div', { class: 'wizard-nav' }, next)),
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
