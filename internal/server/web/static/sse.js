// Server-sent events over fetch: EventSource cannot send the
// Authorization header, and tokens never go into URLs (docs/api.md).

import { authHeaders, unauthorized } from './api.js';

// SSEParser reads a text/event-stream as the HTML standard says: lines
// end with CRLF, LF or CR; "field: value" lines (one space after the
// colon dropped); lines starting with a colon are comments; a blank line
// dispatches the event. push takes text as it arrives, in any pieces, and
// answers the events it completed: {type, data, id}.
export class SSEParser {
  constructor() {
    this.buf = '';
    this.first = true;
    this.skipLF = false;
    this.reset();
    this.lastId = '';
    this.retry = null;
  }

  reset() {
    this.type = '';
    this.data = [];
  }

  push(chunk) {
    this.buf += chunk;
    if (this.first && this.buf.length) {
      if (this.buf.charCodeAt(0) === 0xfeff) this.buf = this.buf.slice(1);
      this.first = false;
    }
    // The text so far ended with a CR: a LF now is the rest of its CRLF.
    if (this.skipLF && this.buf.length) {
      if (this.buf[0] === '\n') this.buf = this.buf.slice(1);
      this.skipLF = false;
    }
    const events = [];
    for (;;) {
      const i = this.buf.search(/[\r\n]/);
      if (i < 0) break;
      const line = this.buf.slice(0, i);
      let skip = 1;
      if (this.buf[i] === '\r') {
        if (i === this.buf.length - 1) this.skipLF = true;
        else if (this.buf[i + 1] === '\n') skip = 2;
      }
      this.buf = this.buf.slice(i + skip);
      const ev = this.line(line);
      if (ev) events.push(ev);
    }
    return events;
  }

  line(line) {
    if (line === '') {
      if (!this.data.length) {
        this.reset();
        return null;
      }
      const ev = { type: this.type || 'message', data: this.data.join('\n'), id: this.lastId };
      this.reset();
      return ev;
    }
    if (line[0] === ':') return null;
    const c = line.indexOf(':');
    const field = c < 0 ? line : line.slice(0, c);
    let value = c < 0 ? '' : line.slice(c + 1);
    if (value[0] === ' ') value = value.slice(1);
    switch (field) {
      case 'event':
        this.type = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
    }
    return null;
  }
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

// follow reads an event stream until close(), reconnecting after a break
// (1 s, doubling to 30 s, or the stream's retry) with Last-Event-ID so
// the server skips what was seen. onEvent gets {type, data, id} with data
// parsed as JSON when it is; onState gets 'connecting', 'live',
// 'reconnecting' or 'closed' (with an error message when it stops for
// good: 401 ends the session, 403 and 404 end the stream).
export function follow(path, { onEvent, onState = () => {} }) {
  const ctrl = new AbortController();
  let lastId = '';
  const loop = async () => {
    let delay = 1000;
    while (!ctrl.signal.aborted) {
      onState('connecting');
      try {
        const headers = { Accept: 'text/event-stream', ...authHeaders() };
        if (lastId) headers['Last-Event-ID'] = lastId;
        const res = await fetch(path, { headers, signal: ctrl.signal, cache: 'no-store' });
        if (res.status === 401) {
          unauthorized();
          onState('closed', 'not signed in');
          return;
        }
        if (res.status === 403 || res.status === 404) {
          onState('closed', `HTTP ${res.status}`);
          return;
        }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        onState('live');
        delay = 1000;
        const parser = new SSEParser();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const ev of parser.push(value)) {
            if (ev.id) lastId = ev.id;
            let data = ev.data;
            try {
              data = JSON.parse(ev.data);
            } catch {
              // not JSON: kept as text
            }
            onEvent({ ...ev, data });
            if (ctrl.signal.aborted) return;
          }
        }
        if (parser.retry !== null) delay = parser.retry;
      } catch (e) {
        if (ctrl.signal.aborted) return;
      }
      onState('reconnecting');
      await sleep(delay, ctrl.signal);
      delay = Math.min(delay * 2, 30000);
    }
  };
  // Started after follow returns, so callbacks may use its answer.
  queueMicrotask(loop);
  return {
    close() {
      if (ctrl.signal.aborted) return;
      ctrl.abort();
      onState('closed');
    },
  };
}
