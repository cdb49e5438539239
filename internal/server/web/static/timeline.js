// A run's timeline: its stages with their steps and gates, each with its
// phase, elapsed time and message; what a rollback did and found.

import { h, badge, elapsed, pre } from './dom.js';

// message shows a stage's or step's message: one line inline, several
// (a failing pod's log tail) as preformatted text.
function message(m) {
  if (!m) return null;
  return m.includes('\n') ? pre(m, { class: 'message' }) : h('p', { class: 'message' }, m);
}

function item(kind, s) {
  return h('li', { class: ['tl-item', `tl-${kind}`], dataset: { testid: kind === 'gate' ? 'timeline-gate' : 'timeline-step', name: s.name, phase: s.phase || 'Pending' } },
    h('div', { class: 'tl-row' },
      h('span', { class: 'tl-kind' }, kind === 'gate' ? 'Gate' : 'Step'),
      h('span', { class: 'tl-name' }, s.name),
      badge(s.phase),
      s.attempts > 1 ? h('span', { class: 'tl-attempts' }, `attempt ${s.attempts}`) : null,
      elapsed(s.startedAt, s.finishedAt)),
    message(s.message));
}

function list(items) {
  return items.length ? h('ul', { class: 'plain-list' }, items.map((x) => h('li', {}, h('code', {}, x)))) : null;
}

// rollback shows a stage's Rollback: the counts, CRDs kept, and every
// difference from the snapshot (a difference makes the rollback fail).
export function rollback(rb) {
  if (!rb) return null;
  const counts = [];
  if (rb.restored) counts.push(`${rb.restored} restored`);
  if (rb.deleted) counts.push(`${rb.deleted} deleted`);
  const diffs = rb.differences || [];
  return h('div', { class: 'rollback', dataset: { testid: 'rollback-details' } },
    h('p', {}, h('strong', {}, 'Rollback: '), counts.join(', ') || 'nothing to undo'),
    rb.kept?.length ? [h('p', {}, 'Kept (deleting a CRD deletes its data):'), list(rb.kept)] : null,
    diffs.length
      ? [h('p', { class: 'text-fail' }, h('span', { 'aria-hidden': 'true' }, '✗ '), `${diffs.length} difference(s) from the snapshot:`), list(diffs)]
      : null,
    rb.notCompared?.length ? [h('p', {}, 'Not compared (taken over by another manager):'), list(rb.notCompared)] : null);
}

// stagesList renders StageStatus[] (status.stages) as an ordered list.
export function stagesList(stages) {
  if (!stages?.length) return h('p', { class: 'muted' }, 'No stage has started yet.');
  return h('ol', { class: 'timeline', dataset: { testid: 'timeline' } }, stages.map((st) =>
    h('li', { class: 'tl-stage', dataset: { testid: 'timeline-stage', name: st.name, phase: st.phase || 'Pending' } },
      h('div', { class: 'tl-row tl-stage-row' },
        h('span', { class: 'tl-kind' }, 'Stage'),
        h('strong', { class: 'tl-name' }, st.name),
        badge(st.phase),
        st.attempts > 1 ? h('span', { class: 'tl-attempts' }, `attempt ${st.attempts}`) : null,
        elapsed(st.startedAt, st.finishedAt)),
      message(st.message),
      st.backup ? h('p', { class: 'muted' }, `Backup: ${st.backup.objects} object(s)${st.backup.absent ? `, ${st.backup.absent} to delete on rollback` : ''}`) : null,
      (st.steps?.length || st.gates?.length)
        ? h('ul', { class: 'tl-steps' }, (st.steps || []).map((s) => item('step', s)), (st.gates || []).map((g) => item('gate', g)))
        : null,
      rollback(st.rollback))));
}

// checksList renders status.checks (the plan's health checks when the
// run started).
export function checksList(checks) {
  if (!checks?.length) return null;
  return h('ul', { class: 'tl-steps', dataset: { testid: 'run-checks' } }, checks.map((c) => item('gate', c)));
}
