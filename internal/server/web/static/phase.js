// An upgrade phase as it runs (the infrastructure's or the app's): its
// status polled every 2 s as embedded-cluster's UI does, and its runs
// followed over server-sent events for a live timeline; the progress bar,
// each component's state, the logs, the approval a run waits for, and
// when it failed the cause and the commands that apply.

import { h, text, badge, pre, time, announce, busy, errorBox, setError, disclosure } from './dom.js';
import { get, post, run as runPath, session } from './api.js';
import { follow } from './sse.js';
import { componentProgress, componentProgressText, stepProgress, actionsFor, runFinished, runEvent, humanize, laterMessage } from './model.js';
import { stagesList } from './timeline.js';
import { supportBundleView } from './supportbundle.js';

const POLL_MS = 2000;

function firstLine(s) {
  const line = String(s || '').split('\n')[0];
  return line.length > 200 || line !== String(s || '') ? `${line.slice(0, 200)}…` : line;
}

const ACTION_LABELS = { approve: 'Approve', abort: 'Abort', rollback: 'Roll back', retry: 'Retry' };

// runAction posts a command to a run and announces it.
export async function runAction(action, name, step) {
  const body = action === 'approve' ? { step: step || '' } : {};
  const res = await post(`${runPath(name)}/${action}`, body);
  announce(`${ACTION_LABELS[action]} of run ${name} requested`);
  return res;
}

// actionButton is one command's button; data-testid is the action's name
// (approve, abort, rollback, retry).
export function actionButton(action, name, { step, onDone, onError }) {
  const b = h('button', { type: 'button', class: action === 'approve' || action === 'retry' ? 'primary' : 'danger', dataset: { testid: action, run: name } },
    action === 'approve' && step ? `Approve step ${step}` : ACTION_LABELS[action]);
  b.addEventListener('click', async () => {
    try {
      await busy(b, () => runAction(action, name, step));
      onDone?.();
    } catch (e) {
      onError?.(e);
    }
  });
  return b;
}

// phaseView: kind 'infra' or 'app'; statusPath its status route; title
// for announcements; onNext when the phase succeeded; failureExtras adds
// commands to the failure panel (the infra's "choose another target").
export function phaseView({ kind, statusPath, title, onNext, failureExtras }) {
  const admin = session.isAdmin();
  const runs = new Map(); // name → {summary, stages, checks}
  let status = null;
  let timer = null;
  let disposed = false;
  let follower = null;
  let followed = '';
  let syncedState = '';
  let stopped = ''; // a run whose stream the server refused (403, 404)
  let live = 'closed';
  let lastState = '';
  let lastWaiting = '';
  let componentStates = new Map();
  let timelineSig = '';
  let actionsSig = '';
  let waitingSig = '';

  const err = errorBox({ dataset: { testid: 'phase-error' } }); // reading the status
  const actionErr = errorBox({ dataset: { testid: 'action-error' } }); // a command
  const statusLine = h('p', { class: 'status-line', id: `${kind}-status`, dataset: { testid: 'phase-status' } });
  const fill = h('div', { class: 'progress-fill' });
  const bar = h('div', {
    class: 'progress', id: `${kind}-progress`, role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100',
    'aria-valuenow': '0', 'aria-labelledby': `${kind}-progress-label`, dataset: { testid: 'progress' },
  }, fill);
  const barText = h('p', { id: `${kind}-progress-label`, class: 'progress-label', dataset: { testid: 'progress-label' } });
  const liveLine = h('p', { class: 'muted small', dataset: { testid: 'live-state' } });
  const waiting = h('div', { class: 'panel panel-wait', hidden: true, dataset: { testid: 'waiting' } });
  const failCause = pre('', { dataset: { testid: 'failure-cause' } });
  const failMessage = pre('', { dataset: { testid: 'failure-message' } });
  const failMessageWrap = h('div', { hidden: true }, h('h4', {}, 'Latest message'), failMessage);
  const failActions = h('div', { class: 'actions', dataset: { testid: 'failure-actions' } });
  const failure = h('section', { class: 'panel panel-fail', hidden: true, 'aria-labelledby': `${kind}-failure-heading`, dataset: { testid: 'failure' } },
    h('h3', { id: `${kind}-failure-heading` }, h('span', { 'aria-hidden': 'true' }, '✗ '), 'What failed'),
    failCause, failMessageWrap, failActions);
  const components = h('ul', { class: 'components', dataset: { testid: 'components' } });
  const timeline = h('div', { class: 'runs-timeline', dataset: { testid: 'timeline-container' } });
  const logs = pre('', { class: 'logs', dataset: { testid: 'logs-text' } });
  const next = h('button', { type: 'button', class: 'primary', disabled: true, dataset: { testid: 'wizard-next' } }, 'Next');
  next.addEventListener('click', () => onNext?.());
  const bundle = kind === 'infra' ? supportBundleView() : null;

  const el = h('div', { class: 'phase' },
    statusLine, bar, barText, liveLine, err, actionErr, waiting, failure,
    h('h3', {}, 'Components'), components,
    h('h3', {}, 'Timeline'), timeline,
    disclosure(`${kind}-logs`, 'Logs', logs),
    bundle?.el,
    h('div', { class: 'wizard-nav' }, next));
  el.querySelector('details').dataset.testid = 'logs';

  const schedule = (ms = POLL_MS) => {
    clearTimeout(timer);
    if (!disposed) timer = setTimeout(poll, ms);
  };

  async function poll() {
    try {
      status = await get(statusPath);
      setError(err, null);
    } catch (e) {
      if (!disposed) setError(err, e);
      schedule();
      return;
    }
    try {
      await syncRuns();
    } catch (e) {
      // The status shows all the same; the timeline waits for the next poll.
      if (!disposed) setError(err, e);
    }
    render();
    schedule();
  }

  // fetchRun reads a run; false when it does not exist yet (a hop whose
  // turn has not come: the server creates a run when it starts it).
  async function fetchRun(name) {
    let d;
    try {
      d = await get(runPath(name));
    } catch (e) {
      if (e.statusCode === 404) return false;
      throw e;
    }
    runs.set(name, { ...runs.get(name), ...runEvent(d), final: false });
    return true;
  }

  // syncRuns keeps the phase's runs current. They run one after the
  // other, each once the one before it succeeded: the first that has not
  // finished is the one in progress, followed over SSE (read on every
  // poll while its stream is down); those before it are read once they
  // finished, and again when the phase's state changes (a new start);
  // those after it do not exist yet, nor those after a run that was
  // rolled back.
  async function syncRuns() {
    const names = status?.runs || [];
    const state = status.status?.state || '';
    if (state !== syncedState) {
      syncedState = state;
      for (const r of runs.values()) r.final = false;
    }
    for (const n of names) {
      const known = runs.get(n);
      if (known?.final) {
        if (known.summary?.phase === 'Succeeded') continue;
        return;
      }
      const streamed = n === followed && follower && live === 'live';
      if (!streamed && !(await fetchRun(n))) {
        // Not created yet: the server creates it while the phase runs;
        // otherwise it is read again when the phase's state changes.
        if (state !== 'Running') runs.set(n, { ...runs.get(n), final: true });
        return;
      }
      const r = runs.get(n);
      if (runFinished(r.summary?.phase)) {
        // A rolled-back run of a phase that runs is being retried: it
        // is read on every poll until it moves, then followed.
        const succeeded = r.summary.phase === 'Succeeded';
        r.final = succeeded || state !== 'Running';
        if (succeeded) continue;
        return;
      }
      if ((followed !== n || !follower) && stopped !== n) startFollow(n);
      return;
    }
  }

  function startFollow(name) {
    if (disposed) return;
    follower?.close();
    followed = name;
    const liveText = (state, why) => text(liveLine, {
      connecting: `Live updates of run ${name}: connecting…`,
      live: `Live updates of run ${name}: on`,
      reconnecting: `Live updates of run ${name}: reconnecting… (the status still refreshes every 2 s)`,
      closed: why ? `Live updates of run ${name}: stopped (${why})` : `Live updates of run ${name}: off (the run finished)`,
    }[state] || '');
    const f = follow(`${runPath(name)}/events`, {
      onEvent(ev) {
        const d = runEvent(ev.data);
        const cur = runs.get(name) || {};
        runs.set(name, { ...cur, ...Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) });
        render();
        if (runFinished(d.summary?.phase) && follower === f) {
          follower = null;
          live = 'closed';
          f.close();
          liveText('closed');
        }
      },
      onState(state, why) {
        if (follower !== f) return;
        live = state;
        liveText(state, why);
        if (state === 'closed') {
          follower = null;
          if (why) stopped = name;
        }
      },
    });
    follower = f;
  }

  function ordered() {
    return (status?.runs || []).map((n) => ({ name: n, ...(runs.get(n) || {}) }));
  }

  function render() {
    if (!status || disposed) return;
    const st = status.status || {};
    const state = st.state || 'Pending';
    // One line: a failure's description may carry a pod's log tail, which
    // the failure panel shows whole.
    const description = firstLine(st.description) || (state === 'Pending' ? 'Not started' : '');
    const failed = state === 'Failed';

    statusLine.replaceChildren(badge(state, { dataset: { testid: 'phase-state' } }), ' ', description,
      ...(status.nextWindow ? [h('span', { class: 'muted', dataset: { testid: 'next-window' } }, ' (in your time: ', time(status.nextWindow), ')')] : []));

    // The infrastructure's bar is embedded-cluster's (components
    // Succeeded over all, its description or "Preparing installation...");
    // the app's counts steps (stepProgress says why).
    const infra = kind === 'infra';
    const pct = infra ? componentProgress(status) : stepProgress(status, ordered());
    const barWords = infra ? componentProgressText(status) : description || humanize(state);
    fill.style.width = `${pct}%`;
    bar.classList.toggle('progress-failed', failed);
    bar.classList.toggle('progress-done', state === 'Succeeded');
    bar.setAttribute('aria-valuenow', String(pct));
    bar.setAttribute('aria-valuetext', `${pct}%: ${barWords}`);
    text(barText, `${pct}%${failed ? ' (failed)' : ''}: ${barWords}`);
    bundle?.update(status.supportBundle);

    renderWaiting();
    renderFailure(failed);
    renderComponents();
    renderTimeline();

    const logText = status.logs || '';
    if (logs.textContent !== logText) {
      const atEnd = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
      logs.textContent = logText;
      if (atEnd) logs.scrollTop = logs.scrollHeight;
    }

    next.disabled = state !== 'Succeeded';

    const w = status.waiting ? `${status.waiting.run}/${status.waiting.step}` : '';
    if (state !== lastState || w !== lastWaiting) {
      let msg = `${title}: ${humanize(state)}${description ? `, ${description}` : ''}`;
      if (w) msg += `. Waiting for approval of step ${status.waiting.step}`;
      announce(msg);
      lastState = state;
      lastWaiting = w;
    }
  }

  function renderWaiting() {
    const w = status.waiting;
    const sig = w ? `${w.run}/${w.step}` : '';
    if (sig === waitingSig) return;
    waitingSig = sig;
    waiting.hidden = !w;
    if (!w) {
      waiting.replaceChildren();
      return;
    }
    waiting.replaceChildren(
      h('p', {}, h('span', { 'aria-hidden': 'true' }, '‖ '), 'Run ', h('code', {}, w.run), ' waits for approval at step ', h('strong', {}, w.step || '?'), '.'),
      ...(w.message ? [h('blockquote', { dataset: { testid: 'waiting-message' } }, w.message)] : []),
      admin
        ? h('div', { class: 'actions' }, actionButton('approve', w.run, { step: w.step, onDone: refresh, onError: (e) => setError(actionErr, e) }))
        : h('p', { class: 'muted' }, 'An admin must approve it (you are signed in as a viewer).'));
  }

  // The failed run: the last one that did not succeed.
  function failedRun() {
    const list = ordered();
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i].summary && list[i].summary.phase !== 'Succeeded') return list[i];
    }
    return list[list.length - 1] || null;
  }

  function renderFailure(failed) {
    const r = failedRun();
    const phase = r?.summary?.phase;
    const show = failed || phase === 'Failed' || phase === 'Aborted' || phase === 'RollbackFailed';
    failure.hidden = !show;
    if (!show) {
      actionsSig = '';
      failActions.replaceChildren();
      return;
    }
    const s = r?.summary || {};
    const cause = s.failure || s.message || status.status?.description || 'The phase failed.';
    text(failCause, cause);
    const msg = laterMessage(cause, s.message);
    failMessageWrap.hidden = !msg;
    text(failMessage, msg);
    const acts = actionsFor(s, admin ? 'admin' : 'viewer').filter((a) => a === 'rollback' || a === 'retry');
    const sig = `${r?.name}/${acts.join(',')}/${failed}`;
    if (sig === actionsSig) return;
    actionsSig = sig;
    failActions.replaceChildren(
      ...acts.map((a) => actionButton(a, r.name, { onDone: refresh, onError: (e) => setError(actionErr, e) })),
      ...(admin && failed && failureExtras ? failureExtras() : []),
      ...(r ? [h('a', { href: `#/runs/${encodeURIComponent(r.name)}`, class: 'button-link', dataset: { testid: 'run-details-link' } }, `Run ${r.name} in detail`)] : []),
      ...(!admin ? [h('p', { class: 'muted' }, 'An admin can roll back or retry (you are signed in as a viewer).')] : []));
  }

  function renderComponents() {
    const comps = status.components || [];
    const changed = [];
    components.replaceChildren(...comps.map((c) => {
      const state = c.status?.state || 'Pending';
      if (componentStates.get(c.name) && componentStates.get(c.name) !== state && (state === 'Succeeded' || state === 'Failed')) changed.push(`${c.name}: ${state}`);
      return h('li', { dataset: { testid: 'component', name: c.name, state } },
        h('span', { class: 'component-name' }, c.name), ' ', badge(state),
        c.status?.description && c.status.description !== state ? h('span', { class: 'muted' }, ` ${c.status.description}`) : null);
    }));
    if (!comps.length) components.append(h('li', { class: 'muted' }, 'None yet.'));
    componentStates = new Map(comps.map((c) => [c.name, c.status?.state || 'Pending']));
    if (changed.length) announce(changed.join('; '));
  }

  function renderTimeline() {
    const list = ordered();
    const sig = JSON.stringify(list.map((r) => [r.name, r.summary?.phase, r.stages]));
    if (sig === timelineSig) return;
    timelineSig = sig;
    if (!list.length) {
      timeline.replaceChildren(h('p', { class: 'muted' }, 'No run yet.'));
      return;
    }
    timeline.replaceChildren(...list.map((r) => h('section', { class: 'run-block', dataset: { testid: 'timeline-run', run: r.name } },
      h('h4', {}, 'Run ', h('a', { href: `#/runs/${encodeURIComponent(r.name)}` }, r.name), ' ',
        r.summary ? badge(r.summary.phase) : null,
        r.summary?.version ? h('span', { class: 'muted' }, ` ${r.summary.fromVersion ? `${r.summary.fromVersion} → ` : ''}${r.summary.version}`) : null),
      stagesList(r.stages))));
  }

  function refresh() {
    setError(actionErr, null);
    schedule(0);
  }

  schedule(0);
  return {
    el,
    dispose() {
      disposed = true;
      clearTimeout(timer);
      follower?.close();
    },
  };
}
