/**
 * Answers over a real socket (the Node adapter, as `mnemo serve` runs). A JSON answer is written
 * from the adapter's own light `Response` (its text straight to the socket): setting a header
 * after the handler (the request id, the rate-limit headers) must not make hono rebuild it as a
 * web `Response` whose body the adapter then reads back through a web `ReadableStream` (a copy
 * of the text made well-formed, a stream reader, its promises: ~0.5 ms of a Recall's CPU,
 * docs/recall.md). The headers set that late still reach the client.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { socketServer } from '../helpers/socket-server.js';

const TOKEN = 'response-socket-token';
const server = socketServer(TOKEN);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

function call(method: string, path: string, body: unknown, token = TOKEN): Promise<Answer> {
  const url = new URL(path, server.url());
  const text = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}),
        },
      },
      (res) => {
        let got = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (got += d));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: got ? JSON.parse(got) : null }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** Counts the web stream readers taken while `fn` runs (the adapter takes one per streamed answer). */
async function readers<T>(fn: () => Promise<T>): Promise<{ value: T; readers: number }> {
  const proto = ReadableStream.prototype;
  const getReader = proto.getReader;
  let n = 0;
  proto.getReader = function (this: ReadableStream, ...a: unknown[]) {
    n++;
    return (getReader as (...b: unknown[]) => unknown).apply(this, a);
  } as typeof getReader;
  try {
    return { value: await fn(), readers: n };
  } finally {
    proto.getReader = getReader;
  }
}

test('a Recall is answered without a web stream, with its request id', async () => {
  const path = '/v1/default/banks/answers/memories';
  const put = await call('POST', path, { items: [{ content: 'Grace borrowed three tomato plants.' }] });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const { value: r, readers: n } = await readers(() =>
    call('POST', `${path}/recall`, { query: 'What did Grace borrow?' }),
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.results[0].text, 'Grace borrowed three tomato plants.');
  assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(Number(r.headers['content-length']), Buffer.byteLength(JSON.stringify(r.body)));
  assert.equal(n, 0);
});

test('an answer under a request limit carries its RateLimit headers, without a web stream', async () => {
  const id = 'limited';
  const project = await call('POST', '/v1/default/projects', {
    id,
    name: 'Limited answers',
    limits: { requests_per_minute: 100 },
  });
  assert.equal(project.status, 201, JSON.stringify(project.body));
  const key = await call('POST', `/v1/default/projects/${id}/keys`, {
    name: 'k',
    scopes: ['recall', 'admin'],
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const { value: r, readers: n } = await readers(() => call('GET', '/v1/me/spaces', undefined, key.body.key));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.headers['ratelimit-limit'], '100');
  assert.ok(r.headers['x-request-id']);
  assert.equal(n, 0);
});
