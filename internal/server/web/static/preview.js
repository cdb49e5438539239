// A plan's preview (PlanPreview): per stage and step, the objects it will
// change, each with its action, a note and a collapsible diff.

import { h, disclosure } from './dom.js';
import { changeCounts, refText } from './model.js';

// diff shows a unified diff line by line, added and removed lines marked
// by their sign (kept) as well as by colour.
function diff(text) {
  const lines = String(text).split('\n');
  return h('pre', { class: 'diff', tabindex: '0' }, lines.map((l, i) => {
    let cls = '';
    if (l.startsWith('+') && !l.startsWith('+++')) cls = 'diff-add';
    else if (l.startsWith('-') && !l.startsWith('---')) cls = 'diff-del';
    else if (l.startsWith('@@')) cls = 'diff-hunk';
    return h('span', { class: cls || undefined }, l + (i < lines.length - 1 ? '\n' : ''));
  }));
}

function change(key, c) {
  return h('li', { class: 'change', dataset: { testid: 'preview-change', action: c.action || '' } },
    h('span', { class: ['action', `action-${c.action || 'unknown'}`] }, c.action || '?'),
    ' ', h('span', { class: 'ref' }, refText(c.ref)),
    c.ref?.apiVersion ? h('span', { class: 'muted' }, ` (${c.ref.apiVersion})`) : null,
    c.note ? h('p', { class: 'note' }, c.note) : null,
    c.diff ? disclosure(key, `Diff of ${refText(c.ref)}`, diff(c.diff)) : null);
}

// renderPreview renders a PlanPreview; key makes the disclosures' keys
// unique on the page (their open state survives a re-render).
export function renderPreview(pv, key = 'preview') {
  if (!pv) return null;
  const all = (pv.stages || []).flatMap((st) => (st.steps || []).flatMap((s) => s.changes || []));
  return h('div', { class: 'preview', dataset: { testid: 'plan-preview' } },
    h('p', {},
      h('strong', {}, pv.plan || 'plan'), pv.version ? ` → ${pv.version}` : '',
      pv.estimate ? `, about ${pv.estimate}` : '',
      `: ${all.length ? changeCounts(all) : 'no change'}`),
    h('ol', { class: 'preview-stages' }, (pv.stages || []).map((st, i) =>
      h('li', { dataset: { testid: 'preview-stage', name: st.name } },
        h('p', { class: 'preview-stage' }, h('strong', {}, `Stage ${st.name}`),
          st.estimate ? h('span', { class: 'muted' }, ` about ${st.estimate}${st.estimateFrom ? ` (from ${st.estimateFrom} earlier run${st.estimateFrom > 1 ? 's' : ''})` : ''}`) : null),
        h('ul', { class: 'preview-steps' }, (st.steps || []).map((s, j) =>
          h('li', { dataset: { testid: 'preview-step', name: s.name } },
            h('p', {}, `Step ${s.name}: `, s.changes?.length ? changeCounts(s.changes) : 'no change'),
            s.changes?.length
              ? h('ul', { class: 'changes' }, s.changes.map((c, k) => change(`${key}/${i}/${j}/${k}`, c)))
              : null)))))));
}

// renderFieldErrors lists a plan's validation errors ([{field, message}])
// as a table, by field.
export function renderFieldErrors(errors) {
  if (!errors?.length) return null;
  return h('table', { class: 'field-errors', dataset: { testid: 'field-errors' } },
    h('caption', {}, `${errors.length} problem(s)`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Problem'))),
    h('tbody', {}, errors.map((e) => h('tr', {}, h('td', {}, h('code', {}, e.field || '(plan)')), h('td', {}, e.message || '')))));
}
