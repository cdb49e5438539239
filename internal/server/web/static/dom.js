// DOM helpers. Every text from the server goes in with textContent (h's
// string children, text()), never as HTML: the UI must not turn a
// message, a diff or a log line into markup.

import { phaseClass, humanize, formatDuration, elapsedSeconds } from './model.js';

// h builds an element: h('button', {type: 'button', on: {click: fn}}, 'Approve').
// attrs: class, dataset ({testid: 'x'} → data-testid), on (events), hidden,
// disabled, checked, value, and any other attribute (set with
// setAttribute; false/null/undefined leave it out). Children: nodes,
// strings (as text), arrays, and null/false (skipped).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'hidden' || k === 'disabled' || k === 'checked' || k === 'open' || k === 'required') el[k] = Boolean(v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

// svg builds an SVG element as h builds an HTML one (attributes with
// setAttribute, class included; children as h's).
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.append(c);
    else el.append(document.createTextNode(String(c)));
  }
}

// text replaces an element's content with a text.
export function text(el, s) {
  el.textContent = s ?? '';
  return el;
}

// announce says a status change to screen readers (the polite live
// region of index.html). The same text twice in a row is said once.
let lastAnnounced = '';
export function announce(msg) {
  const live = document.getElementById('announcer');
  if (!live || !msg || msg === lastAnnounced) return;
  lastAnnounced = msg;
  live.textContent = '';
  // A new text node after a tick makes every screen reader read it.
  setTimeout(() => { live.textContent = msg; }, 50);
}

const ICONS = { ok: '✓', fail: '✗', active: '⟳', pending: '○', warn: '!', muted: '↶' };

// badge shows a state or phase as an icon and its name as text: the
// colour and the icon are never the only sign (the icon is hidden from
// screen readers, the text is read).
export function badge(state, extra = {}) {
  const cls = phaseClass(state);
  return h('span', { class: ['badge', `badge-${cls}`], dataset: { state: state || 'Pending', ...(extra.dataset || {}) } },
    h('span', { class: 'badge-icon', 'aria-hidden': 'true' }, ICONS[cls] || ''),
    ' ', humanize(state || 'Pending'));
}

// elapsed shows how long something took or, when it has not finished,
// has been going on; tick() keeps the running ones current.
export function elapsed(startedAt, finishedAt) {
  const s = elapsedSeconds(startedAt, finishedAt);
  if (s === null) return h('span', { class: 'elapsed' });
  const el = h('span', { class: 'elapsed', dataset: { started: startedAt } }, formatDuration(s));
  if (finishedAt) el.dataset.finished = finishedAt;
  return el;
}

let ticker = null;
export function startTicker() {
  if (ticker) return;
  ticker = setInterval(() => {
    for (const el of document.querySelectorAll('.elapsed[data-started]:not([data-finished])')) {
      const s = elapsedSeconds(el.dataset.started, null);
      if (s !== null) el.textContent = formatDuration(s);
    }
  }, 1000);
}

// pre shows a text as it is (logs, diffs, a failing pod's log tail).
export function pre(s, attrs = {}) {
  return h('pre', { tabindex: '0', ...attrs }, s ?? '');
}

// formatTime shows a timestamp in the browser's time zone.
export function formatTime(iso) {
  if (!iso) return '';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return String(iso);
  return t.toLocaleString();
}

export function time(iso) {
  return iso ? h('time', { datetime: iso }, formatTime(iso)) : '';
}

// errorBox is where an error shows (setError fills it); role=alert makes
// screen readers say it at once.
export function errorBox(attrs = {}) {
  return h('div', { class: 'error', role: 'alert', hidden: true, ...attrs });
}

// setError shows an error (an APIError or any Error) with its field
// errors in an errorBox; null empties and hides it.
export function setError(box, err) {
  box.replaceChildren();
  box.hidden = !err;
  if (!err) return;
  box.append(h('p', {}, h('strong', {}, 'Error: '), err.message || String(err)));
  const list = (err.errors || []).filter((e) => e && (e.message || e.field));
  if (list.length) {
    box.append(h('ul', {}, list.map((e) => h('li', {}, e.field ? [h('code', {}, e.field), ': '] : '', e.message || ''))));
  }
}

// busy disables a button while a request runs and says so.
export async function busy(button, fn) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await fn();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

// disclosure is a <details> whose open state survives re-rendering: key
// names it in a map kept for the page's life.
const openState = new Map();
export function disclosure(key, summary, ...content) {
  const d = h('details', { open: openState.get(key) || false, dataset: { key } }, h('summary', {}, summary), ...content);
  d.addEventListener('toggle', () => openState.set(key, d.open));
  return d;
}

// dl shows [term, value] rows as a description list; rows without a
// value are left out. A value may be a node.
export function dl(rows, attrs = {}) {
  return h('dl', { class: 'facts', ...attrs }, rows
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// saveBlob saves a Blob as a file named name: through a blob URL, the
// way to save what a fetch with the session's token read.
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
