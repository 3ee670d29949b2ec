/**
 * The body limit over a real socket (the Node adapter, as `mnemo serve` runs). A body that
 * declares its length is judged by that length and read straight from the socket: checking it
 * must not make the adapter build a web `Request` and stream the body through a web
 * `ReadableStream` (~0.7 ms of a Recall's CPU, docs/recall.md). A body without a declared length
 * (chunked) is counted as it is read. Both are refused past MAX_BODY_BYTES.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { MAX_BODY_BYTES } from '../../src/api/app.js';
import { socketServer } from '../helpers/socket-server.js';

const TOKEN = 'body-limit-token';
const server = socketServer(TOKEN);

/** A POST over a socket; `length` declares a Content-Length, else the body is sent chunked. */
function post(path: string, chunks: string[], length?: number): Promise<{ status: number; body: any }> {
  const url = new URL(path, server.url());
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          ...(length === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': length }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', (err) =>
      (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err),
    );
    for (const c of chunks) req.write(c);
    if (length === undefined || chunks.join('').length === length) req.end();
  });
}

test('a JSON body with a Content-Length is read without a web stream, and answered', async () => {
  const toWeb = Readable.toWeb;
  let streamed = 0;
  Readable.toWeb = ((...a: Parameters<typeof toWeb>) => {
    streamed++;
    return toWeb(...a);
  }) as typeof toWeb;
  try {
    const body = JSON.stringify({ items: [{ content: 'Grace borrowed three tomato plants.' }] });
    const r = await post('/v1/default/banks/limits/memories', [body], Buffer.byteLength(body));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const q = JSON.stringify({ query: 'What did Grace borrow?' });
    const hit = await post('/v1/default/banks/limits/memories/recall', [q], Buffer.byteLength(q));
    assert.equal(hit.status, 200, JSON.stringify(hit.body));
    assert.equal(hit.body.results[0].text, 'Grace borrowed three tomato plants.');
  } finally {
    Readable.toWeb = toWeb;
  }
  assert.equal(streamed, 0);
});

test(`a declared length over ${MAX_BODY_BYTES} bytes is 413 before the body is read`, async () => {
  const r = await post('/v1/default/banks/limits/memories', ['{"items":'], MAX_BODY_BYTES + 1);
  assert.equal(r.status, 413);
  assert.equal(r.body.error.code, 'payload_too_large');
});

test(`a chunked body over ${MAX_BODY_BYTES} bytes is 413; under it, answered`, async () => {
  const chunk = 'x'.repeat(1024 * 1024);
  const over = ['{"items":[{"content":"', ...Array.from({ length: 10 }, () => chunk), 'x"}]}'];
  const r = await post('/v1/default/banks/limits/memories', over);
  assert.equal(r.status, 413);
  assert.equal(r.body.error.code, 'payload_too_large');
  const ok = await post('/v1/default/banks/limits/memories', ['{"items":[{"content":', '"chunked"}]}']);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
});
