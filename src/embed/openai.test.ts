import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import { assertBackoffs, recordedWaits } from '../../test/fakes/waits.js';
import { createOpenAIEmbedder, EmbeddingError } from './openai.js';

/** A local server speaking OpenAI's embeddings protocol; each test scripts its replies. */
interface Received {
  path: string;
  authorization: string | undefined;
  body: { model: string; input: string[]; dimensions?: number };
}
type Reply = (req: Received, n: number, res: ServerResponse) => void;

const API_KEY = 'sk-test-secret-key-123';
let received: Received[] = [];
let reply: Reply;
let base = '';

/** An unnormalised, text-dependent vector, so the test can tell texts and normalisation apart. */
function fakeEmbedding(text: string, dims: number): number[] {
  return Array.from({ length: dims }, (_, d) =>
    d === 0 ? text.length : ((text.charCodeAt(d % text.length) || 1) % 7) + d,
  );
}

function sendEmbeddings(res: ServerResponse, req: Received, dims = 8, order: 'same' | 'reversed' = 'same') {
  const data = req.body.input.map((text, index) => ({
    object: 'embedding',
    index,
    embedding: fakeEmbedding(text, dims),
  }));
  if (order === 'reversed') data.reverse();
  sendJson(res, 200, {
    object: 'list',
    data,
    model: req.body.model,
    usage: { prompt_tokens: 3, total_tokens: 3 },
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const got: Received = {
    path: req.url ?? '',
    authorization: req.headers.authorization,
    body: JSON.parse(raw),
  };
  received.push(got);
  if (req.method !== 'POST' || got.path !== '/v1/embeddings') {
    sendJson(res, 404, { error: { message: `no route ${req.method} ${got.path}` } });
    return;
  }
  reply(got, received.length, res);
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  received = [];
  reply = (req, _n, res) => sendEmbeddings(res, req);
});

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const unit = (values: number[]) => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (x) => x / norm);
};

test('speaks the protocol: request shape, unit vectors in order, dimensions learnt from the reply', async () => {
  const embedder = createOpenAIEmbedder({ url: base, model: 'fake-embed', apiKey: API_KEY });
  assert.throws(() => embedder.dimensions, /dimensions are unknown until the first reply/);
  assert.throws(() => embedder.id, /dimensions are unknown/);

  const texts = ['hello', 'a longer text', 'hello'];
  const vectors = await embedder.embed(texts);
  assert.equal(received.length, 1);
  assert.equal(received[0]!.path, '/v1/embeddings');
  assert.equal(received[0]!.authorization, `Bearer ${API_KEY}`);
  assert.deepEqual(received[0]!.body, { model: 'fake-embed', input: texts });
  assert.equal(vectors.length, 3);
  for (const [i, v] of vectors.entries()) {
    assert.ok(v instanceof Float32Array);
    assert.ok(Math.abs(cosine(v, v) - 1) < 1e-6);
    assert.deepEqual(v, unit(fakeEmbedding(texts[i]!, 8)));
  }
  assert.equal(embedder.dimensions, 8);
  assert.equal(embedder.id, 'openai:fake-embed:8');
  assert.deepEqual(await embedder.embed([]), []);
  assert.equal(received.length, 1);
});

test('the URL may end in /v1, /v1/ or /embeddings, or in none of them', async () => {
  for (const url of [base, `${base}/`, `${base}/v1`, `${base}/v1/`, `${base}/v1/embeddings`]) {
    const [vector] = await createOpenAIEmbedder({ url, model: 'm' }).embed(['x']);
    assert.equal(vector?.length, 8, url);
  }
  assert.ok(received.every((r) => r.path === '/v1/embeddings' && r.authorization === undefined));
  assert.throws(() => createOpenAIEmbedder({ url: 'not a url', model: 'm' }), /not a valid URL/);
});

test('batches large inputs and puts replies in input order', async () => {
  reply = (req, _n, res) => sendEmbeddings(res, req, 8, 'reversed');
  const texts = ['one', 'two', 'three', 'four', 'five'];
  const vectors = await createOpenAIEmbedder({ url: base, model: 'm', batchSize: 2 }).embed(texts);
  assert.deepEqual(
    received.map((r) => r.body.input),
    [['one', 'two'], ['three', 'four'], ['five']],
  );
  assert.deepEqual(
    vectors,
    texts.map((t) => unit(fakeEmbedding(t, 8))),
  );
});

test('configured dimensions are sent, and a reply of another size is an error', async () => {
  reply = (req, _n, res) => sendEmbeddings(res, req, req.body.dimensions);
  const embedder = createOpenAIEmbedder({ url: base, model: 'm', dimensions: 4 });
  assert.equal(embedder.dimensions, 4);
  assert.equal(embedder.id, 'openai:m:4');
  const [vector] = await embedder.embed(['x']);
  assert.equal(vector?.length, 4);
  assert.equal(received[0]?.body.dimensions, 4);

  reply = (req, _n, res) => sendEmbeddings(res, req, 6);
  await assert.rejects(embedder.embed(['x']), /embedding 0 has 6 dimensions, expected 4/);
});

test('429 then 200: retried after the wait the server asks for', async () => {
  reply = (req, n, res) => {
    if (n === 1) sendJson(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '0.6' });
    else sendEmbeddings(res, req);
  };
  const { waits, sleep } = recordedWaits();
  const vectors = await createOpenAIEmbedder({ url: base, model: 'm', sleep }).embed(['a', 'b']);
  assert.equal(vectors.length, 2);
  assert.equal(received.length, 2);
  assert.deepEqual(waits, [600], 'Retry-After 0.6 s, not the backoff');
});

test('500 forever: a bounded number of attempts, then a clear error without the key', async () => {
  reply = (_req, _n, res) =>
    sendJson(res, 500, { error: { message: `upstream exploded (key ${API_KEY})`, type: 'server_error' } });
  const { waits, sleep } = recordedWaits();
  const embedder = createOpenAIEmbedder({
    url: `${base}/v1`,
    model: 'm',
    apiKey: API_KEY,
    maxRetries: 2,
    sleep,
  });
  const error = await embedder.embed(['x']).then(
    () => assert.fail('should reject'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof EmbeddingError);
  assert.equal(error.status, 500);
  assert.equal(received.length, 3);
  assertBackoffs(waits, [0, 1]);
  assert.match(
    error.message,
    /^embeddings \(m at http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings\): HTTP 500: upstream exploded/,
  );
  assert.match(error.message, /gave up after 3 attempts/);
  assert.ok(!error.message.includes(API_KEY), error.message);
  assert.ok(!(error.stack ?? '').includes(API_KEY));
});

test('client errors are not retried', async () => {
  reply = (_req, _n, res) => sendJson(res, 400, { error: { message: "'$.input' is invalid" } });
  await assert.rejects(
    createOpenAIEmbedder({ url: base, model: 'm' }).embed(['']),
    (err: unknown) =>
      err instanceof EmbeddingError &&
      err.status === 400 &&
      /HTTP 400: '\$\.input' is invalid$/.test(err.message),
  );
  assert.equal(received.length, 1);
});

test('malformed replies are errors', async () => {
  const embedder = createOpenAIEmbedder({ url: base, model: 'm' });
  reply = (_req, _n, res) => res.writeHead(200).end('<html>proxy</html>');
  await assert.rejects(embedder.embed(['x']), /HTTP 200 reply is not JSON/);
  reply = (_req, _n, res) => sendJson(res, 200, { object: 'list', data: [] });
  await assert.rejects(embedder.embed(['x']), /expected "data" with 1 embeddings/);
  reply = (_req, _n, res) => sendJson(res, 200, { data: [{ index: 0, embedding: [0, 0, 0] }] });
  await assert.rejects(embedder.embed(['x']), /all zeros/);
});

test('a server that does not answer times out, not retried', async () => {
  reply = () => {};
  const embedder = createOpenAIEmbedder({ url: base, model: 'm', timeoutMs: 50 });
  await assert.rejects(embedder.embed(['x']), /no reply within 50 ms/);
  assert.equal(received.length, 1);
});

// With the real timer of the default `sleep`: the wait is spent, and the abort cuts it short.
test('the caller can abort, also while waiting to retry', async () => {
  reply = (_req, _n, res) => sendJson(res, 503, { error: { message: 'busy' } }, { 'retry-after': '20' });
  const controller = new AbortController();
  const pending = createOpenAIEmbedder({ url: base, model: 'm' }).embed(['x'], controller.signal);
  setTimeout(() => controller.abort(new Error('caller gave up')), 100);
  await assert.rejects(pending, /caller gave up/);
  assert.equal(received.length, 1);
});

test('network failures are reported with their cause', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const embedder = createOpenAIEmbedder({ url: `http://127.0.0.1:${port}`, model: 'm', maxRetries: 0 });
  await assert.rejects(embedder.embed(['x']), /request failed: fetch failed \(.*ECONNREFUSED/);
});
