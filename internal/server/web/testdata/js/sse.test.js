import { SSEParser } from '/assets/sse.js';
import { eq } from './assert.js';

// feed pushes the pieces one after the other and collects the events.
function feed(...pieces) {
  const p = new SSEParser();
  const out = [];
  for (const x of pieces) out.push(...p.push(x));
  return { p, out };
}

export const tests = {
  'an event of the API'() {
    const { out } = feed('id: 3\nevent: transition\ndata: {"summary":{"phase":"Running"}}\n\n');
    eq(out, [{ type: 'transition', data: '{"summary":{"phase":"Running"}}', id: '3' }]);
  },
  'pieces split anywhere, CRLF split between pieces'() {
    const text = 'id: 7\r\nevent: transition\r\ndata: a\r\ndata: b\r\n\r\n';
    for (let i = 1; i < text.length; i++) {
      const { out } = feed(text.slice(0, i), text.slice(i));
      eq(out, [{ type: 'transition', data: 'a\nb', id: '7' }], `split at ${i}`);
    }
  },
  'CR alone ends a line'() {
    eq(feed('data: x\r\r').out, [{ type: 'message', data: 'x', id: '' }]);
  },
  'comments (the keep-alive) and unknown fields are skipped'() {
    eq(feed(': keep-alive\n\n', 'foo: bar\ndata: y\n\n').out, [{ type: 'message', data: 'y', id: '' }]);
  },
  'an event without data is not dispatched, and its type does not leak'() {
    eq(feed('event: transition\n\ndata: z\n\n').out, [{ type: 'message', data: 'z', id: '' }]);
  },
  'the last id carries over to later events'() {
    const { out } = feed('id: 1\ndata: a\n\ndata: b\n\n');
    eq(out.map((e) => e.id), ['1', '1']);
  },
  'one space after the colon is dropped, not more; no colon is an empty value'() {
    eq(feed('data:  two\ndata\n\n').out, [{ type: 'message', data: ' two\n', id: '' }]);
  },
  'a BOM at the start is skipped'() {
    eq(feed('\uFEFFdata: q\n\n').out, [{ type: 'message', data: 'q', id: '' }]);
  },
  'retry is read'() {
    const { p } = feed('retry: 5000\n\n');
    eq(p.retry, 5000);
  },
  'an unfinished event waits for its blank line'() {
    const p = new SSEParser();
    eq(p.push('data: half\n'), []);
    eq(p.push('\n'), [{ type: 'message', data: 'half', id: '' }]);
  },
};
