import { h, badge, setError, errorBox } from '/assets/dom.js';
import { stagesList } from '/assets/timeline.js';
import { renderPreview } from '/assets/preview.js';
import { eq, ok } from './assert.js';

const EVIL = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';

export const tests = {
  'text from the server stays text'() {
    const el = h('p', {}, EVIL);
    eq(el.children.length, 0);
    eq(el.textContent, EVIL);
  },
  'a badge says its state in words'() {
    const b = badge('RollingBack');
    eq(b.dataset.state, 'RollingBack');
    ok(b.textContent.includes('Rolling back'), b.textContent);
    eq(b.querySelector('[aria-hidden="true"]') !== null, true);
  },
  'a timeline of hostile names and messages has no markup of theirs'() {
    const tl = stagesList([{
      name: EVIL, phase: 'Failed', message: `pod log:\n${EVIL}`,
      steps: [{ name: EVIL, phase: 'Failed', message: EVIL, startedAt: '2026-11-24T08:00:00Z', finishedAt: '2026-11-24T08:00:09Z' }],
      gates: [{ name: 'ready', phase: 'Succeeded' }],
      rollback: { restored: 2, differences: [EVIL] },
    }]);
    eq(tl.querySelectorAll('img, script').length, 0);
    eq(tl.querySelectorAll('[data-testid="timeline-step"]').length, 1);
    eq(tl.querySelectorAll('[data-testid="timeline-gate"]').length, 1);
    ok(tl.querySelector('[data-testid="timeline-step"] .elapsed').textContent === '9s', 'elapsed of a finished step');
    ok(tl.querySelector('pre').textContent.includes(EVIL), 'a multi-line message is preformatted');
    ok(tl.textContent.includes('1 difference(s)'), 'rollback differences shown');
  },
  'a preview renders diffs as text lines'() {
    const pv = renderPreview({
      plan: 'demo-1.1.0', version: '1.1.0', estimate: '1m',
      stages: [{ name: 'app', steps: [{ name: 'web', changes: [{ ref: { kind: 'Deployment', namespace: 'demo', name: 'web' }, action: 'update', diff: `--- live\n+++ planned\n@@ -1 +1 @@\n-${EVIL}\n+b` }] }] }],
    });
    eq(pv.querySelectorAll('img, script').length, 0);
    eq(pv.querySelectorAll('.diff-del').length, 1);
    eq(pv.querySelectorAll('.diff-add').length, 1);
    ok(pv.textContent.includes('1 update'), pv.textContent);
  },
  'an error shows its field errors'() {
    const box = errorBox();
    setError(box, { message: 'invalid plan', errors: [{ field: 'spec.version', message: EVIL }] });
    eq(box.hidden, false);
    eq(box.querySelectorAll('li').length, 1);
    eq(box.querySelectorAll('img, script').length, 0);
    setError(box, null);
    eq(box.hidden, true);
  },
  'nothing ran the hostile markup'() {
    eq(window.__pwned, undefined);
  },
};
