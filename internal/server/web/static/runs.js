// The runs pages: #/runs (the history, newest first), #/runs/NAME (one
// run: its stages, steps and gates, what its rollback found, live while
// it moves, and the commands that apply).

import { h, text, badge, pre, time, dl, announce, errorBox, setError, disclosure, busy } from './dom.js';
import { get, post, run as runPath, reportMarkdown, session, APIError } from './api.js';
import { follow } from './sse.js';
import { formatDuration, runDuration, runFinished, actionsFor, runEvent, laterMessage } from './model.js';
import { stagesList, checksList } from './timeline.js';
import { actionButton } from './phase.js';
import { renderPreview, renderFieldErrors } from './preview.js';

const LIST_POLL_MS = 5000;

export function renderRuns(main) {
  let timer = null;
  let disposed = false;
  const err = errorBox({ dataset: { testid: 'runs-error' } });
  const tbody = h('tbody', {});
  const table = h('table', { class: 'runs', dataset: { testid: 'runs-table' } },
    h('caption', { class: 'visually-hidden' }, 'Runs, newest first'),
    h('thead', {}, h('tr', {}, ['Name', 'Plan', 'Version', 'Phase', 'Started', 'Duration'].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const refresh = h('button', { type: 'button', dataset: { testid: 'runs-refresh' } }, 'Refresh');
  main.replaceChildren(
    h('h1', { tabindex: '-1', dataset: { testid: 'runs-heading' } }, 'Runs'),
    h('p', {}, 'Every run of a plan on this cluster, the CLI\'s and the controller\'s too. ', h('a', { href: '#/preview' }, 'Preview a plan'), '.'),
    err,
    h('div', { class: 'table-wrap' }, table),
    h('div', { class: 'actions' }, refresh));

  async function load() {
    try {
      const res = await get('/api/runs');
      setError(err, null);
      const items = res?.items || [];
      tbody.replaceChildren(...items.map((s) => h('tr', { dataset: { testid: 'run-row', run: s.name, phase: s.phase || '' } },
        h('th', { scope: 'row' }, h('a', { href: `#/runs/${encodeURIComponent(s.name)}` }, s.name)),
        h('td', {}, s.plan || ''),
        h('td', {}, s.fromVersion ? `${s.fromVersion} → ${s.version || '?'}` : s.version || ''),
        h('td', {}, badge(s.phase), s.waiting ? h('span', { class: 'muted' }, ` waiting at ${s.waiting.step}`) : null),
        h('td', {}, time(s.startedAt)),
        h('td', {}, formatDuration(runDuration(s))))));
      if (!items.length) tbody.append(h('tr', {}, h('td', { colspan: '6' }, 'No run yet.')));
    } catch (e) {
      if (!disposed) setError(err, e);
    }
  }
  const tick = async () => {
    await load();
    if (!disposed) timer = setTimeout(tick, LIST_POLL_MS);
  };
  refresh.addEventListener('click', () => busy(refresh, load));
  tick();
  return {
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}

export function renderRun(main, name) {
  const admin = session.isAdmin();
  let disposed = false;
  let follower = null;
  let data = {}; // {summary, stages, checks, run}
  let actionsSig = '';
  let lastPhase = '';
  let timer = null;

  const err = errorBox({ dataset: { testid: 'run-error' } });
  const facts = h('div', {});
  const failure = h('div', { hidden: true, dataset: { testid: 'run-failure' } });
  const actions = h('div', { class: 'actions', dataset: { testid: 'run-actions' } });
  const liveLine = h('p', { class: 'muted small', dataset: { testid: 'live-state' } });
  const checks = h('div', {});
  const timeline = h('div', {});
  const report = pre('', { class: 'report', dataset: { testid: 'report' } });
  const reportBox = disclosure(`report/${name}`, 'Report (Markdown)', report);
  reportBox.addEventListener('toggle', () => {
    if (reportBox.open) loadReport();
  });
  const keptPreview = h('div', { dataset: { testid: 'run-kept-preview' } }, h('p', { class: 'muted' }, 'Reading the preview the run was started on…'));
  const previewOut = h('div', { 'aria-live': 'polite' });
  const previewButton = h('button', { type: 'button', dataset: { testid: 'run-preview' } }, 'Preview this run\'s plan against the cluster now');
  previewButton.addEventListener('click', () => busy(previewButton, previewRun));

  main.replaceChildren(
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/runs' }, 'Runs'), ' / ', name),
    h('h1', { tabindex: '-1', dataset: { testid: 'run-heading' } }, 'Run ', name),
    err, facts, failure, actions, liveLine,
    h('h2', {}, 'Stages'), timeline,
    checks,
    h('h2', {}, 'Preview'),
    keptPreview,
    h('h3', {}, 'Against the cluster now'),
    h('p', { class: 'help' }, 'What the run\'s plan (as the run recorded it, redacted) would change if it ran now: the differences between the cluster and the plan. A plan whose inline sources were redacted may not preview.'),
    previewButton, previewOut,
    h('h2', {}, 'Report'), reportBox);

  // loadKeptPreview shows the diffs the run was started on, as the
  // server kept them (GET /api/runs/{name}/preview): what the run was
  // about to change, whatever the cluster looks like since.
  async function loadKeptPreview() {
    try {
      const p = await get(`${runPath(name)}/preview`);
      if (disposed) return;
      keptPreview.replaceChildren(
        h('p', { class: 'help' }, 'What the run was about to change when it started: the diffs previewed then, kept by the server.'),
        renderPreview(p, `kept/${name}`));
    } catch (e) {
      if (disposed) return;
      const why = e instanceof APIError && e.statusCode === 404
        ? 'No preview was kept for this run: the server keeps the preview of the runs it starts, not of the CLI\'s or the controller\'s.'
        : `The kept preview could not be read: ${e.message}`;
      keptPreview.replaceChildren(h('p', { class: 'muted' }, why));
    }
  }
  loadKeptPreview();

  async function loadReport() {
    try {
      const md = await reportMarkdown(name);
      report.textContent = typeof md === 'string' ? md : JSON.stringify(md, null, 2);
    } catch (e) {
      report.textContent = `The report could not be read: ${e.message}`;
    }
  }

  async function previewRun() {
    const spec = data.run?.spec?.plan;
    if (!spec) {
      previewOut.replaceChildren(h('p', {}, 'The run has no plan to preview.'));
      return;
    }
    const plan = { apiVersion: 'upshift.dev/v1alpha1', kind: 'UpgradePlan', metadata: { name: data.summary?.plan || name }, spec };
    previewOut.replaceChildren(h('p', {}, 'Previewing…'));
    previewOut.replaceChildren(await previewResult(JSON.stringify(plan), 'application/json', `run/${name}`));
  }

  function render() {
    const s = data.summary || {};
    facts.replaceChildren(dl([
      ['Phase', s.phase ? badge(s.phase, { dataset: { testid: 'run-phase' } }) : ''],
      ['Plan', s.plan],
      ['Version', s.fromVersion ? `${s.fromVersion} → ${s.version || '?'}` : s.version],
      ['At', [s.stage, s.step].filter(Boolean).join(' / ')],
      ['Waiting for approval at', s.waiting ? s.waiting.step : ''],
      ['Attempt', s.attempt ? String(s.attempt) : ''],
      ['Started', time(s.startedAt)],
      ['Finished', time(s.finishedAt)],
      ['Duration', formatDuration(runDuration(s))],
      ['Message', s.message && !s.message.includes('\n') ? s.message : ''],
    ], { dataset: { testid: 'run-summary' } }));
    const cause = s.failure || (s.message?.includes('\n') ? s.message : '');
    failure.hidden = !cause;
    failure.replaceChildren(...(cause ? [h('h2', {}, h('span', { 'aria-hidden': 'true' }, '✗ '), s.failure ? 'What stopped the run' : 'Message'), pre(cause, { dataset: { testid: 'failure-cause' } })] : []));
    const later = s.failure ? laterMessage(s.failure, s.message) : '';
    if (later) failure.append(h('h3', {}, 'Latest message'), pre(later, { dataset: { testid: 'failure-message' } }));

    const acts = actionsFor(s, admin ? 'admin' : 'viewer');
    const sig = `${acts.join(',')}/${s.waiting?.step || ''}`;
    if (sig !== actionsSig) {
      actionsSig = sig;
      actions.replaceChildren(...acts.map((a) => actionButton(a, name, {
        step: s.waiting?.step,
        onDone: reload,
        onError: (e) => setError(err, e),
      })), ...(!admin && s.phase && !runFinished(s.phase) ? [h('p', { class: 'muted' }, 'Signed in as a viewer: an admin approves, aborts, rolls back or retries.')] : []));
    }
    timeline.replaceChildren(stagesList(data.stages));
    checks.replaceChildren(...(data.checks?.length ? [h('h2', {}, 'Health checks when the run started'), checksList(data.checks)] : []));
    if (s.phase && s.phase !== lastPhase) {
      if (lastPhase) announce(`Run ${name}: ${s.phase}`);
      lastPhase = s.phase;
    }
    document.title = `Run ${name} · Upshift`;
  }

  function startFollow() {
    if (follower || disposed) return;
    const f = follow(`${runPath(name)}/events`, {
      onEvent(ev) {
        const d = runEvent(ev.data);
        data = { ...data, ...Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) };
        render();
        if (runFinished(d.summary?.phase) && follower === f) {
          follower = null;
          f.close();
          text(liveLine, 'The run finished: live updates are off.');
          timer = setTimeout(reload, LIST_POLL_MS);
        }
      },
      onState(state, why) {
        if (follower !== f || disposed) return;
        text(liveLine, {
          connecting: 'Live updates: connecting…',
          live: 'Live updates: on',
          reconnecting: 'Live updates: reconnecting…',
          closed: why ? `Live updates: stopped (${why})` : 'Live updates: off',
        }[state] || '');
        if (state === 'closed') {
          follower = null;
          clearTimeout(timer);
          timer = setTimeout(reload, LIST_POLL_MS);
        }
      },
    });
    follower = f;
  }

  // reload reads the run; while no stream follows it (finished, or the
  // stream refused), it reads it again every 5 s: a retry or a rollback
  // moves a finished run again.
  async function reload() {
    clearTimeout(timer);
    try {
      const d = await get(runPath(name));
      if (disposed) return;
      data = { ...runEvent(d), run: d.run };
      setError(err, null);
      render();
      if (!runFinished(data.summary?.phase)) startFollow();
    } catch (e) {
      if (!disposed) setError(err, e);
    }
    if (!disposed && !follower) timer = setTimeout(reload, LIST_POLL_MS);
  }
  reload();

  return {
    dispose() {
      disposed = true;
      clearTimeout(timer);
      follower?.close();
    },
  };
}

// previewResult posts a plan to POST /api/plans/preview and shows the
// errors by field, or the preview.
async function previewResult(body, contentType, key) {
  try {
    const res = await post('/api/plans/preview', body, { contentType });
    return h('div', { dataset: { testid: 'preview-result' } },
      res?.errors?.length ? renderFieldErrors(res.errors) : null,
      res?.preview ? renderPreview(res.preview, key) : h('p', {}, 'No preview.'));
  } catch (e) {
    const box = errorBox({ dataset: { testid: 'preview-error' } });
    setError(box, e.errors?.length ? { message: e.message } : e);
    return h('div', { dataset: { testid: 'preview-result' } }, box, renderFieldErrors(e.errors));
  }
}

// renderPreviewPage is #/preview: a plan pasted as YAML or JSON, previewed
// without changing anything.
export function renderPreviewPage(main) {
  const area = h('textarea', {
    id: 'plan-text', rows: '18', spellcheck: 'false', autocomplete: 'off', required: true,
    'aria-describedby': 'plan-text-help', dataset: { testid: 'plan-text' },
  });
  const submit = h('button', { type: 'submit', class: 'primary', dataset: { testid: 'preview-submit' } }, 'Preview');
  const out = h('div', { 'aria-live': 'polite', dataset: { testid: 'preview-output' } });
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'preview-heading' },
    h('div', { class: 'field' },
      h('label', { for: 'plan-text' }, 'Plan (an UpgradePlan, YAML or JSON)'),
      area,
      h('p', { class: 'help', id: 'plan-text-help' }, 'Nothing is changed: the server validates the plan, preflights it against the cluster and shows what each step would change.')),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const t = area.value.trim();
    if (!t) {
      area.setAttribute('aria-invalid', 'true');
      out.replaceChildren(h('p', { class: 'field-error' }, 'Paste a plan first.'));
      area.focus();
      return;
    }
    area.removeAttribute('aria-invalid');
    out.replaceChildren(h('p', {}, 'Previewing…'));
    const type = t.startsWith('{') ? 'application/json' : 'application/yaml';
    out.replaceChildren(await busy(submit, () => previewResult(t, type, 'page')));
  });
  main.replaceChildren(h('h1', { id: 'preview-heading', tabindex: '-1', dataset: { testid: 'preview-heading' } }, 'Preview a plan'), form, out);
  return { dispose() {} };
}
