// The rollout pages: #/apps (every AppRollout the server may read) and
// #/apps/NS/NAME (one: its canary steps as a strip, the current one
// marked; its analysis measurements charted; its rollback and
// conditions; the requests that apply now). Both read again every 2 s:
// the controller, not this page, moves a rollout.

import { h, svg, pre, time, dl, announce, errorBox, setError, busy, disclosure } from './dom.js';
import { get, post, session } from './api.js';
import { humanize } from './model.js';
import { appPhaseClass, chart, chartSummary, requestLabel, appPath } from './appmodel.js';

const POLL_MS = 2000;
const REQUEST_IDS = { promote: 'app-promote', abort: 'app-abort', retry: 'app-retry', pause: 'app-pause', resume: 'app-resume' };
const ICONS = { ok: '✓', fail: '✗', active: '⟳', pending: '○', warn: '!', muted: '↶' };

// appBadge shows a rollout's or an analysis' phase as icon and text.
function appBadge(phase, label, testid) {
  const cls = appPhaseClass(phase);
  return h('span', { class: ['badge', `badge-${cls}`], dataset: { state: phase || 'New', ...(testid ? { testid } : {}) } },
    h('span', { class: 'badge-icon', 'aria-hidden': 'true' }, ICONS[cls] || ''), ' ', label || humanize(phase || 'New'));
}

function versions(a) {
  return a.currentVersion && a.currentVersion !== a.targetVersion ? `${a.currentVersion} → ${a.targetVersion}` : a.targetVersion;
}

// poller calls load now and POLL_MS after each load ends, until
// disposed; again() loads at once (after the load in flight, if any).
function poller(load) {
  let timer = null;
  let disposed = false;
  let inFlight = false;
  let queued = false;
  const tick = async () => {
    clearTimeout(timer);
    if (disposed) return;
    if (inFlight) {
      queued = true;
      return;
    }
    inFlight = true;
    await load(() => disposed);
    inFlight = false;
    if (disposed) return;
    if (queued) {
      queued = false;
      tick();
      return;
    }
    timer = setTimeout(tick, POLL_MS);
  };
  tick();
  return {
    again: tick,
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}

export function renderApps(main) {
  const err = errorBox({ dataset: { testid: 'apps-error' } });
  const tbody = h('tbody', {});
  let shown = null;
  main.replaceChildren(
    h('h1', { tabindex: '-1', dataset: { testid: 'apps-heading' } }, 'App rollouts'),
    h('p', {}, 'The AppRollouts of this cluster that the server may read. The controller (', h('code', {}, 'upshift controller'),
      ') rolls them; ', h('code', {}, 'upshift app get -A'), ' shows the same.'),
    err,
    h('div', { class: 'table-wrap' }, h('table', { class: 'runs', dataset: { testid: 'apps-table' } },
      h('caption', { class: 'visually-hidden' }, 'App rollouts, by namespace and name'),
      h('thead', {}, h('tr', {}, ['Rollout', 'Phase', 'Version', 'Step', 'Message'].map((c) => h('th', { scope: 'col' }, c)))),
      tbody)));
  return poller(async (disposed) => {
    try {
      const res = await get('/api/apps');
      if (disposed()) return;
      setError(err, null);
      const items = res?.items || [];
      const json = JSON.stringify(items);
      if (json === shown) return; // a focused link keeps its focus
      shown = json;
      tbody.replaceChildren(...items.map((a) => h('tr', { dataset: { testid: 'app-row', app: `${a.namespace}/${a.name}`, phase: a.phase || '' } },
        h('th', { scope: 'row' }, h('a', { href: `#/apps/${encodeURIComponent(a.namespace)}/${encodeURIComponent(a.name)}` }, `${a.namespace}/${a.name}`)),
        h('td', {}, appBadge(a.phase, a.display)),
        h('td', {}, versions(a)),
        h('td', {}, a.step || ''),
        h('td', {}, a.nextWindow ? `Waiting for a window: the next opens ${new Date(a.nextWindow).toLocaleString()}` : a.message || ''))));
      if (!items.length) tbody.append(h('tr', {}, h('td', { colspan: '5' }, 'No AppRollout yet (docs/apps.md says how to write one).')));
    } catch (e) {
      if (!disposed()) setError(err, e);
    }
  });
}

// stepStrip draws the canary steps left to right; the current one is
// aria-current="step" and says what it waits for.
function stepStrip(steps) {
  if (!steps?.length) return null;
  // role=list: a list styled without markers is still read as one.
  return h('ol', { class: 'step-strip', role: 'list', dataset: { testid: 'app-steps' }, 'aria-label': 'Canary steps' }, steps.map((s, i) => {
    const mark = { done: '✓', current: '▶', pending: '' }[s.state] || '';
    return h('li', {
      class: ['strip-step', `strip-${s.state}`], 'aria-current': s.state === 'current' ? 'step' : null,
      dataset: { testid: 'app-step', state: s.state, weight: String(s.weight) },
    },
    h('span', { class: 'strip-weight' }, mark ? h('span', { 'aria-hidden': 'true' }, `${mark} `) : null, `${s.weight}%`),
    h('span', { class: 'strip-pause' }, s.untilPromoted ? 'until promoted' : s.pause ? `pause ${s.pause}s` : 'no pause'),
    h('span', { class: 'visually-hidden' }, `, step ${i + 1} of ${steps.length}, ${s.state}`),
    s.detail ? h('span', { class: 'strip-detail' }, s.detail) : null);
  }));
}

// metricChart is a small SVG of a metric's measurements, each verdict a
// shape and a colour, with the thresholds the conditions give.
function metricChart(metric) {
  const c = chart(metric);
  const shape = (p) => {
    const tip = svg('title', {}, `${new Date(p.takenAt).toLocaleTimeString()}: ${p.value || 'no value'} (${p.phase})`);
    const attrs = { class: `pt pt-${p.phase}`, dataset: { phase: p.phase, value: p.value } };
    if (p.phase === 'Failed') return svg('path', { ...attrs, d: `M${p.x - 4} ${p.y - 4}L${p.x + 4} ${p.y + 4}M${p.x - 4} ${p.y + 4}L${p.x + 4} ${p.y - 4}` }, tip);
    if (p.phase === 'Inconclusive') return svg('path', { ...attrs, d: `M${p.x} ${p.y - 5}L${p.x + 5} ${p.y + 4}L${p.x - 5} ${p.y + 4}Z` }, tip);
    if (p.phase === 'Error') return svg('rect', { ...attrs, x: p.x - 4, y: p.y - 4, width: 8, height: 8 }, tip);
    return svg('circle', { ...attrs, cx: p.x, cy: p.y, r: 4 }, tip);
  };
  const line = c.points.length > 1 ? svg('polyline', { class: 'chart-line', points: c.points.map((p) => `${p.x},${p.y}`).join(' ') }) : null;
  return svg('svg', {
    class: 'chart', role: 'img', 'aria-label': chartSummary(metric), viewBox: `0 0 ${c.width} ${c.height}`,
    width: c.width, height: c.height, dataset: { testid: 'metric-chart', points: String(c.points.length) },
  },
  svg('rect', { class: 'chart-frame', x: 0.5, y: 0.5, width: c.width - 1, height: c.height - 1 }),
  c.lines.map((l) => svg('line', { class: `chart-threshold chart-${l.kind}`, x1: 0, x2: c.width, y1: l.y, y2: l.y, dataset: { kind: l.kind, value: String(l.value) } })),
  line, c.points.map(shape));
}

function analysisView(an) {
  if (!an) return null;
  return h('section', { dataset: { testid: 'app-analysis' } },
    h('h2', {}, `${humanize(an.kind || 'Canary')} analysis `, appBadge(an.phase, null, 'analysis-phase')),
    h('p', { class: 'muted small' }, 'Since ', time(an.startedAt), '. Points: ● successful, ▲ inconclusive, ✕ failed, ■ error; dashed lines are the thresholds.'),
    an.metrics.map((m) => h('div', { class: 'metric', dataset: { testid: 'app-metric', name: m.name, phase: m.phase } },
      h('h3', {}, m.name, ' ', appBadge(m.phase)),
      h('p', { class: 'small' }, `${m.count} measured, ${m.failed} failed, ${m.inconclusive} inconclusive, ${m.error} errors.`,
        m.successCondition ? [' Good when ', h('code', {}, m.successCondition), '.'] : null,
        m.failureCondition ? [' Bad when ', h('code', {}, m.failureCondition), '.'] : null),
      metricChart(m),
      m.message ? h('p', { class: 'metric-message' }, m.message) : null,
      disclosure(`measurements/${m.name}`, 'Measurements (newest last)', h('table', { dataset: { testid: 'measurements' } },
        h('thead', {}, h('tr', {}, ['Taken', 'Value', 'Verdict', 'Message'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, m.measurements.map((x) => h('tr', {}, h('td', {}, time(x.takenAt)), h('td', {}, h('code', {}, x.value || '')),
          h('td', {}, x.phase), h('td', {}, x.message || '')))))))));
}

function rollbackView(rb) {
  if (!rb) return null;
  return h('section', { class: rb.differences.length ? 'panel panel-fail' : 'rollback', dataset: { testid: 'app-rollback' } },
    h('h2', {}, 'Rollback'),
    dl([['Why', rb.reason], ['Restored and verified', rb.restored ? 'yes' : 'not yet'],
      ['Down-migration', rb.downMigrationJob ? h('code', {}, `job/${rb.downMigrationJob}`) : ''],
      ['For its group', rb.group ? 'yes: a rollout after this one failed' : '']]),
    rb.differences.length ? [h('p', { class: 'text-fail' }, 'Not as captured:'), h('ul', {}, rb.differences.map((d) => h('li', {}, h('code', {}, d))))] : null);
}

function summaryView(a) {
  const bg = a.blueGreen;
  return [
    dl([
      ['Phase', appBadge(a.phase, a.display, 'app-phase')],
      ['Strategy', a.strategy],
      ['Version', versions(a)],
      ['Canary weight', a.stepCount && a.phase === 'Deploying' ? `${a.canaryWeight}%` : ''],
      ['Stable', a.stableImage ? `${a.stableImage}, ${a.replicas} replicas` : ''],
      ['Attempt', a.attempt ? String(a.attempt) : ''],
      ['Waiting for a window', a.nextWindow ? h('span', { dataset: { testid: 'app-next-window' } }, 'the next opens ', time(a.nextWindow)) : ''],
      ['Windows', (a.windows || []).join('; ')],
      ['Migration', a.migrationJob ? h('code', {}, `job/${a.migrationJob}`) : ''],
      ['Services', bg ? `active ${bg.activeService}${bg.previewService ? `, preview ${bg.previewService}` : ''}: ${bg.switchedAt ? 'switched' : bg.previewReadyAt ? 'preview ready, not switched' : 'preview coming up'}` : ''],
    ], { dataset: { testid: 'app-summary' } }),
    a.message ? (a.message.includes('\n') ? pre(a.message) : h('p', { class: 'message-line', dataset: { testid: 'app-message' } }, a.message)) : null,
  ];
}

function conditionsView(conditions) {
  return [h('h2', {}, 'Conditions'),
    h('table', { dataset: { testid: 'app-conditions' } },
      h('thead', {}, h('tr', {}, ['Type', 'Status', 'Reason', 'Message', 'Since'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, conditions.map((c) => h('tr', {}, h('td', {}, c.type), h('td', {}, c.status), h('td', {}, c.reason), h('td', {}, c.message || ''), h('td', {}, time(c.lastTransitionTime))))))];
}

// SECTIONS are a rollout's page below its requests, each drawn again
// only when what it shows changed: a held canary's countdown does not
// take the focus from an open measurements table.
const SECTIONS = [
  { pick: ({ steps, analysis, rollback, conditions, requests, ...rest }) => ({ ...rest, stepCount: steps.length }), view: summaryView },
  { pick: (a) => a.steps, view: (steps) => (steps.length ? [h('h2', {}, 'Canary steps'), stepStrip(steps)] : null) },
  { pick: (a) => a.analysis, view: analysisView },
  { pick: (a) => a.rollback, view: rollbackView },
  { pick: (a) => a.conditions, view: conditionsView },
];

export function renderApp(main, ns, name) {
  const admin = session.isAdmin();
  const path = appPath(ns, name);
  const err = errorBox({ dataset: { testid: 'app-error' } });
  const sections = SECTIONS.map(() => h('div', {}));
  const shown = SECTIONS.map(() => null);
  const actions = h('div', { class: 'actions', dataset: { testid: 'app-actions' } });
  // A request's refusal stays until the next click: the poll clears err.
  const reqErr = errorBox({ dataset: { testid: 'app-request-error' } });
  let lastPhase = '';
  let reqSig = null;
  main.replaceChildren(
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/apps' }, 'App rollouts'), ` / ${ns} / `, name),
    h('h1', { tabindex: '-1', dataset: { testid: 'app-heading' } }, `Rollout ${ns}/${name}`),
    err, actions, reqErr, ...sections);
  document.title = `Rollout ${name} · Upshift`;

  const p = poller(async (disposed) => {
    try {
      const a = await get(path);
      if (disposed()) return;
      setError(err, null);
      render(a);
    } catch (e) {
      if (!disposed()) setError(err, e);
    }
  });

  function request(req) {
    const b = h('button', { type: 'button', class: req === 'abort' ? 'danger' : req === 'promote' || req === 'retry' ? 'primary' : '', dataset: { testid: REQUEST_IDS[req] || req } }, requestLabel(req));
    b.addEventListener('click', async () => {
      setError(reqErr, null);
      try {
        await busy(b, () => post(`${path}/${req}`));
        announce(`${requestLabel(req)} of ${ns}/${name} requested: the controller acts on it`);
        reqSig = null;
        p.again();
      } catch (e) {
        setError(reqErr, e);
      }
    });
    return b;
  }

  function render(a) {
    const sig = (a.requests || []).join(',');
    if (sig !== reqSig) {
      reqSig = sig;
      actions.replaceChildren(...(admin ? a.requests.map(request) : [h('p', { class: 'muted' }, 'Signed in as a viewer: an admin promotes, aborts, retries, pauses or resumes.')]));
    }
    SECTIONS.forEach((sec, i) => {
      const data = sec.pick(a);
      const json = JSON.stringify(data ?? null);
      if (json === shown[i]) return;
      shown[i] = json;
      // One wrapper: h flattens arrays and skips nulls, which
      // replaceChildren would write as text.
      sections[i].replaceChildren(h('div', {}, sec.view(data)));
    });
    if (a.display !== lastPhase) {
      if (lastPhase) announce(`Rollout ${ns}/${name}: ${a.display}`);
      lastPhase = a.display;
    }
  }
  return p;
}
