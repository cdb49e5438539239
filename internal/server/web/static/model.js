// Pure functions of the API's data (no DOM, no fetch), tested in a
// browser by web's tests (testdata/model.test.js).

// The wizard's steps, in order: every one a wizard may show.
// phaseOrder picks those an upgrade shows.
export const STEPS = [
  { id: 'welcome', title: 'Welcome' },
  { id: 'configuration', title: 'Configuration' },
  { id: 'airgap', title: 'Airgap bundle' },
  { id: 'host-preflights', title: 'Host preflights' },
  { id: 'infra', title: 'Infrastructure upgrade' },
  { id: 'app-preflights', title: 'App preflights' },
  { id: 'app-upgrade', title: 'App upgrade' },
  { id: 'done', title: 'Done' },
];

// phaseOrder is the steps an upgrade shows, in embedded-cluster's order
// (getPhaseOrder, upgrade mode): the airgap bundle's processing when
// airgap, the host preflights and the infrastructure upgrade only when
// it requires one, then the app's preflights and upgrade.
export function phaseOrder({ isAirgap = false, requiresInfraUpgrade = true } = {}) {
  return STEPS.filter((s) => {
    if (s.id === 'airgap') return Boolean(isAirgap);
    if (s.id === 'host-preflights' || s.id === 'infra') return Boolean(requiresInfraUpgrade);
    return true;
  });
}

// stepForState is the wizard step that shows a server state
// (GET /api/linux/upgrade/state), so a reload, or a restarted server,
// picks up where it was. The names are embedded-cluster's; its states
// Upshift does not have fall where they would be.
export function stepForState(state) {
  switch (state) {
    case 'AirgapProcessing':
    case 'AirgapProcessed':
    case 'AirgapProcessingFailed':
      return 'airgap';
    case 'HostPreflightsRunning':
    case 'HostPreflightsSucceeded':
    case 'HostPreflightsFailed':
    case 'HostPreflightsExecutionFailed':
    case 'HostPreflightsFailedBypassed':
      return 'host-preflights';
    case 'InfrastructureUpgrading':
    case 'InfrastructureUpgraded':
    case 'InfrastructureUpgradeFailed':
      return 'infra';
    case 'AppPreflightsRunning':
    case 'AppPreflightsSucceeded':
    case 'AppPreflightsFailed':
    case 'AppPreflightsExecutionFailed':
    case 'AppPreflightsFailedBypassed':
      return 'app-preflights';
    case 'AppUpgrading':
    case 'AppUpgradeFailed':
      return 'app-upgrade';
    case 'Succeeded':
      return 'done';
    default:
      return 'welcome';
  }
}

// flagsForState are phaseOrder's inputs as a server state (GET .../state)
// tells them. Its requiresInfraUpgrade is the upgrade's hops, known once
// one started: before (New, the host preflights, the airgap bundle) the
// check decides, and until then the infrastructure steps show, as an
// upgrade usually has hops.
export function flagsForState(ws) {
  const st = ws?.state || '';
  const before = !st || st === 'New' || stepForState(st) === 'host-preflights' || stepForState(st) === 'airgap';
  // A server in an airgap state is airgap, whatever else it says.
  const isAirgap = Boolean(ws?.isAirgap) || stepForState(st) === 'airgap';
  return { isAirgap, requiresInfraUpgrade: before || Boolean(ws?.requiresInfraUpgrade) };
}

// landingStep is the step a server state opens the wizard at: its
// step, or the next one shown when that one is not (an infrastructure
// upgrade without hops ends at once: the app's preflights come next).
export function landingStep(ws) {
  const id = stepForState(ws?.state);
  const shown = phaseOrder(flagsForState(ws)).map((s) => s.id);
  if (shown.includes(id)) return id;
  const after = STEPS.slice(STEPS.findIndex((s) => s.id === id) + 1);
  return after.find((s) => shown.includes(s.id))?.id || 'welcome';
}

// phaseClass sorts a state (Pending/Running/Succeeded/Failed), a run's
// phase or a stage's, step's or gate's phase into what a badge shows.
export function phaseClass(phase) {
  switch (phase) {
    case 'Succeeded':
      return 'ok';
    case 'Failed':
    case 'RollbackFailed':
      return 'fail';
    case 'Running':
    case 'BackingUp':
    case 'Gating':
    case 'RollingBack':
      return 'active';
    case 'Warned':
    case 'Aborted':
      return 'warn';
    case 'RolledBack':
    case 'Skipped':
      return 'muted';
    default:
      return 'pending';
  }
}

// humanize: "RollingBack" → "Rolling back".
export function humanize(s) {
  const words = String(s).replace(/([a-z])([A-Z])/g, '$1 $2').split(' ');
  return words.map((w, i) => (i === 0 ? w : w.toLowerCase())).join(' ');
}

// A run that will not move again without an operator's command
// (v1alpha1.RunPhase.Finished).
export function runFinished(phase) {
  return phase === 'Succeeded' || phase === 'RolledBack';
}

// actionsFor lists the commands that apply to a run (a RunSummary) in
// the order the UI offers them: approve while it waits at an approval
// step, abort while it moves, rollback once it failed or was aborted,
// retry once it failed (its failed step again) or was rolled back (a new
// attempt). A viewer gets none.
export function actionsFor(summary, role) {
  if (!summary || role !== 'admin') return [];
  const out = [];
  const p = summary.phase;
  if (summary.waiting && (p === 'Running' || p === 'Pending')) out.push('approve');
  if (p === 'Running' || p === 'Pending') out.push('abort');
  if (p === 'Failed' || p === 'Aborted') out.push('rollback');
  if (p === 'Failed' || p === 'RolledBack') out.push('retry');
  return out;
}

// countSteps counts a run's steps (not its gates) and those that
// succeeded.
export function countSteps(stages) {
  let done = 0;
  let total = 0;
  for (const st of stages || []) {
    for (const s of st.steps || []) {
      total++;
      if (s.phase === 'Succeeded') done++;
    }
  }
  return { done, total };
}

// componentProgress is the infrastructure phase's percentage as
// embedded-cluster's InstallationProgress computes it: round(100 ×
// components Succeeded / components), 100 once the phase Succeeded.
export function componentProgress(status) {
  if (status?.status?.state === 'Succeeded') return 100;
  const components = status?.components || [];
  if (!components.length) return 0;
  const ok = components.filter((c) => c.status?.state === 'Succeeded').length;
  return Math.round((100 * ok) / components.length);
}

// componentProgressText is the text under embedded-cluster's bar: the
// phase's description (its first line; the failure panel shows it
// whole), or "Preparing installation..." before it has one.
export function componentProgressText(status) {
  const d = String(status?.status?.description || '').split('\n')[0];
  return d || 'Preparing installation...';
}

// stepProgress is the app phase's percentage: round(100 × succeeded
// steps / all steps) over the runs followed (each {stages}). The app
// phase keeps it, not embedded-cluster's component count: its one run
// often has a single stage (component), whose bar would sit at 0 until
// the end; its steps move it as the run does. Components no run followed
// yet count as one step each; without a run's stages yet it is
// componentProgress. Succeeded is 100.
export function stepProgress(status, runs) {
  if (status?.status?.state === 'Succeeded') return 100;
  const components = status?.components || [];
  let done = 0;
  let total = 0;
  let stages = 0;
  for (const r of runs || []) {
    const c = countSteps(r.stages);
    done += c.done;
    total += c.total;
    stages += (r.stages || []).length;
  }
  if (total === 0) return componentProgress(status);
  total += Math.max(0, components.length - stages);
  return Math.round((100 * done) / total);
}

// supportBundleInfo reads the infrastructure status's supportBundle
// ({name, createdAt, bytes, files, missing, error}) into what the phase
// shows: the link's text ("Support bundle (N KB, created …)", created
// written by formatTime), the file name, and the error's text; null
// without one.
export function supportBundleInfo(sb, formatTime = (t) => t) {
  if (!sb || typeof sb !== 'object') return null;
  const hasFile = Boolean(sb.name) && Number(sb.bytes) > 0;
  const kb = Math.max(1, Math.round(Number(sb.bytes || 0) / 1024));
  const parts = [`${kb} KB`];
  if (sb.createdAt) parts.push(`created ${formatTime(sb.createdAt)}`);
  return {
    text: hasFile ? `Support bundle (${parts.join(', ')})` : '',
    fileName: sb.name || 'support-bundle.tar.gz',
    files: Number(sb.files) || 0,
    missing: Array.isArray(sb.missing) ? sb.missing : [],
    error: sb.error ? String(sb.error) : '',
  };
}

// elapsedSeconds: from startedAt to finishedAt, or to now while it has
// not finished; null before it started. Timestamps are RFC 3339 (with
// microseconds: metav1.MicroTime).
export function elapsedSeconds(startedAt, finishedAt, now = Date.now()) {
  if (!startedAt) return null;
  const a = Date.parse(startedAt);
  if (Number.isNaN(a)) return null;
  const b = finishedAt ? Date.parse(finishedAt) : now;
  if (Number.isNaN(b)) return null;
  return Math.max(0, Math.round((b - a) / 1000));
}

// formatDuration: 5 → "5s", 65 → "1m 05s", 3725 → "1h 02m 05s".
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '';
  const s = Math.max(0, Math.round(seconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  const pad = (n) => String(n).padStart(2, '0');
  if (hh) return `${hh}h ${pad(mm)}m ${pad(ss)}s`;
  if (mm) return `${mm}m ${pad(ss)}s`;
  return `${ss}s`;
}

// runDuration is a RunSummary's duration in seconds: durationSeconds
// when the server says it, otherwise from its timestamps.
export function runDuration(summary, now = Date.now()) {
  if (typeof summary?.durationSeconds === 'number') return summary.durationSeconds;
  return elapsedSeconds(summary?.startedAt, summary?.finishedAt, now);
}

// runEvent reads an event of GET /api/runs/{name}/events (or the answer
// of GET /api/runs/{name}) into {summary, stages, checks}; fields the
// data does not carry are undefined.
export function runEvent(data) {
  if (!data || typeof data !== 'object') return {};
  const status = data.run?.status || data.status;
  return {
    summary: data.summary,
    stages: data.stages || status?.stages,
    checks: data.checks || status?.checks,
  };
}

// laterMessage is what a run's message says beyond its failure: a
// rollback's message is the failure with "; rolled back STAGES; restore
// verified" at the end of its first line (the failure may go on with
// log lines; runs saved by earlier versions have it after them), which
// is all that is new. '' when it says nothing more.
export function laterMessage(failure, message) {
  if (!message || message === failure) return '';
  if (failure && message.startsWith(failure)) return message.slice(failure.length).replace(/^[\s;:,]+/, '');
  const cut = failure ? failure.indexOf('\n') : -1;
  if (cut >= 0) {
    const head = failure.slice(0, cut);
    const rest = failure.slice(cut);
    if (message.startsWith(head) && message.endsWith(rest) && message.length > failure.length) {
      return message.slice(head.length, message.length - rest.length).replace(/^[\s;:,]+/, '');
    }
  }
  return message;
}

// parseValues turns key=value rows into the values object of a check or
// a start; it throws on a row without a key and on a key given twice.
export function parseValues(rows) {
  const out = {};
  rows.forEach(([k, v], i) => {
    const key = (k || '').trim();
    if (!key && !(v || '').trim()) return;
    if (!key) throw Object.assign(new Error(`value row ${i + 1} has no key`), { field: 'values' });
    if (Object.hasOwn(out, key)) throw Object.assign(new Error(`key ${key} is given twice`), { field: `values.${key}` });
    out[key] = v || '';
  });
  return out;
}

// changeCounts: "2 update, 1 create" of a step's or a plan's changes.
export function changeCounts(changes) {
  const n = new Map();
  for (const c of changes || []) n.set(c.action, (n.get(c.action) || 0) + 1);
  return [...n].map(([a, k]) => `${k} ${a}`).join(', ');
}

// refText: "Deployment demo/web" of a change's ref.
export function refText(ref) {
  if (!ref) return '';
  const ns = ref.namespace ? `${ref.namespace}/` : '';
  return `${ref.kind || '?'} ${ns}${ref.name || ''}`.trim();
}

// preflightsBlocked tells whether preflights stop the wizard: any
// failure, unless the server allows ignoring them (the app's
// allowIgnoreAppPreflights, the host's allowIgnoreHostPreflights: kind
// 'host') and the operator said so.
export function preflightsBlocked(res, ignore, kind = 'app') {
  const fails = res?.output?.fail || [];
  if (!fails.length) return false;
  const allowed = kind === 'host' ? res.allowIgnoreHostPreflights : res.allowIgnoreAppPreflights;
  return !(allowed && ignore);
}

// preflightsGate is what a preflights step offers for results (app or
// host, kind as preflightsBlocked): running while they are not in; the
// ignore box shown when failures may be ignored, the blocking notice
// when they may not; ready when the upgrade may start (nothing failed
// and they succeeded, or the failures are ignored where allowed).
export function preflightsGate(res, ignore, kind = 'app') {
  const state = res?.status?.state || 'Pending';
  const running = state === 'Running' || state === 'Pending';
  const fails = res?.output?.fail || [];
  const allowed = Boolean(kind === 'host' ? res?.allowIgnoreHostPreflights : res?.allowIgnoreAppPreflights);
  return {
    running,
    failed: fails.length,
    showIgnore: fails.length > 0 && allowed,
    blocking: fails.length > 0 && !allowed,
    ready: !running && (fails.length ? !preflightsBlocked(res, ignore, kind) : state === 'Succeeded'),
  };
}
