// The API client (docs/api.md): the session's token in sessionStorage,
// sent as Authorization: Bearer on every call; errors as APIError; a 401
// ends the session and sends the UI back to the login screen.

const KEY = 'upshift.session';

export const session = {
  // get: {token, role, expiresAt}, or null without a valid one.
  get() {
    let s = null;
    try {
      s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    } catch {
      s = null;
    }
    if (!s || typeof s.token !== 'string' || !s.token) return null;
    if (s.expiresAt && Date.parse(s.expiresAt) <= Date.now()) {
      this.clear();
      return null;
    }
    return s;
  },
  set(s) {
    sessionStorage.setItem(KEY, JSON.stringify({ token: s.token, role: s.role, expiresAt: s.expiresAt }));
  },
  clear() {
    sessionStorage.removeItem(KEY);
  },
  role() {
    return this.get()?.role || '';
  },
  isAdmin() {
    return this.role() === 'admin';
  },
};

// APIError is the API's error body: statusCode, message, field, errors
// ([{field, message}]).
export class APIError extends Error {
  constructor(statusCode, message, field = '', errors = []) {
    super(message || `HTTP ${statusCode}`);
    this.name = 'APIError';
    this.statusCode = statusCode;
    this.field = field || '';
    this.errors = Array.isArray(errors) ? errors : [];
  }
}

// unauthorized ends the session and tells the app (app.js listens).
export function unauthorized(message = 'Your session ended: sign in again.') {
  session.clear();
  window.dispatchEvent(new CustomEvent('upshift:unauthorized', { detail: { message } }));
}

// authHeaders are the headers every authenticated call sends.
export function authHeaders() {
  const s = session.get();
  return s ? { Authorization: `Bearer ${s.token}` } : {};
}

// request calls the API. body: an object is sent as JSON; a string with
// contentType as is. It answers the parsed JSON (or the text of another
// content type) and throws APIError when the status is not 2xx.
export async function request(method, path, { body, contentType, accept = 'application/json', signal, auth = true } = {}) {
  const headers = { Accept: accept, ...(auth ? authHeaders() : {}) };
  let payload;
  if (body !== undefined) {
    if (typeof body === 'string') {
      payload = body;
      headers['Content-Type'] = contentType || 'text/plain';
    } else {
      payload = JSON.stringify(body);
      headers['Content-Type'] = 'application/json';
    }
  }
  let res;
  try {
    res = await fetch(path, { method, headers, body: payload, signal, cache: 'no-store', credentials: 'same-origin' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new APIError(0, `cannot reach the server (${e.message})`);
  }
  const type = res.headers.get('Content-Type') || '';
  let data = null;
  if (type.includes('json')) {
    try {
      data = await res.json();
    } catch {
      data = null;
    }
  } else {
    data = await res.text();
  }
  if (res.ok) return data;
  const err = data && typeof data === 'object'
    ? new APIError(data.statusCode || res.status, data.message, data.field, data.errors)
    : new APIError(res.status, (typeof data === 'string' && data.trim().slice(0, 300)) || res.statusText);
  if (res.status === 401 && auth) unauthorized();
  throw err;
}

// download reads a file the API serves (a support bundle) with the
// session's token, which a plain link cannot send: its bytes as a Blob
// and the name its Content-Disposition gives (fallback otherwise).
export async function download(path, fallback) {
  let res;
  try {
    res = await fetch(path, { headers: { Accept: '*/*', ...authHeaders() }, cache: 'no-store', credentials: 'same-origin' });
  } catch (e) {
    throw new APIError(0, `cannot reach the server (${e.message})`);
  }
  if (!res.ok) {
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (res.status === 401) unauthorized();
    throw new APIError(data?.statusCode || res.status, data?.message || res.statusText);
  }
  const m = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') || '');
  return { blob: await res.blob(), name: m ? m[1] : fallback };
}

export const get = (path, opts) => request('GET', path, opts);
export const post = (path, body = {}, opts) => request('POST', path, { ...opts, body });

// login trades the password for a token (POST /api/auth/login) and keeps
// it for the browser tab's life.
export async function login(password) {
  const res = await request('POST', '/api/auth/login', { body: { password }, auth: false });
  if (!res || !res.token) throw new APIError(0, 'the server answered no token');
  session.set(res);
  return res;
}

export const run = (name) => `/api/runs/${encodeURIComponent(name)}`;

// reportMarkdown is a run's report as the server writes it in Markdown.
export const reportMarkdown = (name) => get(`${run(name)}/report?format=markdown`, { accept: 'text/markdown, text/plain;q=0.9, */*;q=0.1' });
export const upgrade = (p) => `/api/linux/upgrade/${p}`;
