// What the rollout pages compute, without the DOM (testdata/js tests it):
// a rollout phase's badge class, a measurement's number, a condition's
// threshold and the chart's geometry.

// appPhaseClass sorts an AppRollout's or an analysis' phase into a badge.
export function appPhaseClass(phase) {
  switch (phase) {
    case 'Healthy':
    case 'Successful':
      return 'ok';
    case 'Failed':
    case 'Error':
      return 'fail';
    case 'Pending':
    case 'Migrating':
    case 'Deploying':
    case 'HealthChecking':
    case 'Running':
      return 'active';
    case 'Inconclusive':
      return 'warn';
    case 'RolledBack':
      return 'muted';
    default:
      return 'pending';
  }
}

const NUMBER = /[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i;

// measuredNumber is the first number of a measurement's value ("0.02",
// "[0.01 0.03]", "{\"rate\": 0.4}"), or null when it has none.
export function measuredNumber(value) {
  const m = NUMBER.exec(String(value ?? ''));
  if (!m) return null;
  const n = Number(m[0]);
  return Number.isFinite(n) ? n : null;
}

// threshold is the number a condition compares the result with, when it
// is that simple ("result[0] < 0.05", "result > 10"); null otherwise.
export function threshold(cond) {
  const m = /^\s*result(\[0\])?\s*[<>]=?\s*([-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?)\s*$/i.exec(String(cond || ''));
  return m ? Number(m[2]) : null;
}

// chart lays out a metric's measurements, oldest first, in a width ×
// height box with pad around: each a point at its number (a measurement
// without one — an error — sits on the bottom line), and the success and
// failure thresholds as lines when the conditions give them. The scale
// takes in 0 and the thresholds, so a line is never off the chart.
export function chart(metric, { width = 320, height = 96, pad = 8 } = {}) {
  const ms = metric?.measurements || [];
  const nums = ms.map((m) => measuredNumber(m.value));
  const lines = [['success', threshold(metric?.successCondition)], ['failure', threshold(metric?.failureCondition)]]
    .filter(([, v]) => v !== null);
  const all = [0, ...nums.filter((n) => n !== null), ...lines.map(([, v]) => v)];
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  if (hi === lo) hi = lo + 1;
  const y = (v) => height - pad - ((v - lo) / (hi - lo)) * (height - 2 * pad);
  const step = ms.length > 1 ? (width - 2 * pad) / (ms.length - 1) : 0;
  const points = ms.map((m, i) => ({
    x: ms.length > 1 ? pad + i * step : width / 2,
    y: nums[i] === null ? height - pad : y(nums[i]),
    value: m.value ?? '',
    number: nums[i],
    phase: m.phase,
    takenAt: m.takenAt,
  }));
  return { width, height, lo, hi, points, lines: lines.map(([kind, v]) => ({ kind, value: v, y: y(v) })) };
}

// chartSummary says what the chart shows, for screen readers.
export function chartSummary(metric) {
  const ms = metric?.measurements || [];
  if (!ms.length) return `${metric?.name}: no measurement yet`;
  const last = ms[ms.length - 1];
  return `${metric.name}: ${ms.length} measurements shown of ${metric.count ?? ms.length}; the last ${last.value || 'without a value'} (${last.phase})`;
}

const REQUEST_LABELS = { promote: 'Promote', abort: 'Abort and roll back', retry: 'Retry', pause: 'Pause', resume: 'Resume' };

// requestLabel is a request's button text.
export function requestLabel(req) {
  return REQUEST_LABELS[req] || req;
}

// appPath is a rollout's API path.
export function appPath(ns, name) {
  return `/api/apps/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
}
