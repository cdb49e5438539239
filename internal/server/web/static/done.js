// The wizard's Done step: the report of every run of the upgrade (the
// infrastructure's hops and the app's), as the server writes it in
// Markdown (GET /api/runs/{name}/report?format=markdown).

import { h, pre, errorBox, setError } from './dom.js';
import { get, reportMarkdown, upgrade, session } from './api.js';

export function doneStep({ onNew }) {
  const err = errorBox({ dataset: { testid: 'done-error' } });
  const reports = h('div', { class: 'reports' }, h('p', {}, 'Loading the reports…'));
  const again = h('button', { type: 'button', hidden: !session.isAdmin(), dataset: { testid: 'new-upgrade' } }, 'Start a new upgrade');
  again.addEventListener('click', () => onNew());
  let disposed = false;

  (async () => {
    try {
      const state = await get(upgrade('state'));
      const names = [...(state?.infraRuns || []), state?.appRun].filter(Boolean);
      if (disposed) return;
      if (!names.length) {
        reports.replaceChildren(h('p', {}, 'The upgrade ran no run (nothing needed to change).'));
        return;
      }
      reports.replaceChildren(...names.map((name) => {
        const body = pre('Loading…', { class: 'report', dataset: { testid: 'report', run: name }, 'aria-label': `Report of run ${name}` });
        reportMarkdown(name)
          .then((md) => { body.textContent = typeof md === 'string' ? md : JSON.stringify(md, null, 2); })
          .catch((e) => { body.textContent = `The report could not be read: ${e.message}`; });
        return h('section', { class: 'report-block', 'aria-labelledby': `report-${name}` },
          h('h3', { id: `report-${name}` }, 'Run ', h('a', { href: `#/runs/${encodeURIComponent(name)}` }, name)),
          body);
      }));
    } catch (e) {
      if (!disposed) setError(err, e);
    }
  })();

  return {
    el: h('div', {}, err, reports, h('div', { class: 'wizard-nav' }, again)),
    dispose() {
      disposed = true;
    },
  };
}
