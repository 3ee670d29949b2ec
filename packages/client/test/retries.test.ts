import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type FakeReply, type FakeServer, startFakeHttp } from '../../../test/fakes/fake-http.js';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  ConflictError,
  InternalServerError,
  Mnemo,
  RateLimitError,
} from '../src/index.js';
import { backoffMs, type Sleep, serverDelayMs } from '../src/http.js';

const OK_RETAIN = {
  success: true,
  memories_created: 1,
  document_id: null,
  memory_ids: ['m1'],
  extraction: 'chunks',
};
const rateLimited = (headers: Record<string, string>): FakeReply => ({
  status: 429,
  json: { error: { code: 'rate_limited', message: 'slow down', request_id: 'req-429' } },
  headers,
});

/**
 * The waits a client asked for between attempts, none of them spent: what Retry-After and the
 * backoff come to is checked as numbers, and the file takes no seconds of sleeping. The real
 * timer is the default client's, used below where an abort must cut a wait short.
 */
const recordedWaits = () => {
  const waits: number[] = [];
  const sleep: Sleep = async (ms, signal) => {
    if (signal?.aborted) throw new APIUserAbortError('request aborted');
    waits.push(ms);
  };
  return { waits, sleep };
};

describe('retries, idempotency keys and timeouts (fake server)', () => {
  let fake: FakeServer<FakeReply>;
  let client: Mnemo;
  const { waits, sleep } = recordedWaits();
  before(async () => {
    fake = await startFakeHttp<FakeReply>((_req, reply) => reply ?? { status: 200, json: OK_RETAIN });
    client = new Mnemo({ baseUrl: fake.url, adminToken: 'tok', sleep });
  });
  after(() => fake.close());
  const reset = (handler: (n: number) => FakeReply | undefined) => {
    fake.requests.length = 0;
    waits.length = 0;
    fake.respond((_body, n) => handler(n));
  };
  /** Each wait is the backoff of its attempt: 0.5 s, 1 s, 2 s ..., each at most 25 % short. */
  const assertBackoffs = (got: number[], attempts: number[]) => {
    assert.equal(got.length, attempts.length, `waits ${JSON.stringify(got)}`);
    got.forEach((ms, i) => {
      const base = 500 * 2 ** attempts[i]!;
      assert.ok(ms <= base && ms >= base * 0.75, `wait ${i}: ${ms} ms, not the backoff of ${base} ms`);
    });
  };

  test('429 with Retry-After: 0, then 200: one retry, the same Idempotency-Key', async () => {
    reset((n) => (n === 0 ? rateLimited({ 'Retry-After': '0' }) : undefined));
    const res = await client.memories.retain('b', { items: [{ content: 'x' }] });
    assert.deepEqual(res, OK_RETAIN);
    assert.equal(fake.requests.length, 2);
    assert.deepEqual(waits, [0], 'Retry-After: 0 is no wait');
    const [a, b] = fake.requests.map((r) => r.headers['idempotency-key']);
    assert.match(String(a), /^[0-9a-f-]{36}$/);
    assert.equal(a, b);
    assert.deepEqual(fake.requests[1]?.body, { items: [{ content: 'x' }] });
    assert.equal(fake.requests[0]?.headers.authorization, 'Bearer tok');
    assert.equal(fake.requests[0]?.path, '/v1/default/banks/b/memories');
  });

  test('each call gets its own key; a given key is sent as is; GET sends none', async () => {
    reset(() => undefined);
    await client.memories.retain('b', { items: [{ content: 'x' }] });
    await client.memories.retain('b', { items: [{ content: 'x' }] });
    await client.memories.retain('b', { items: [{ content: 'x' }] }, { idempotencyKey: 'import-42' });
    await client.memories.delete('b', 'm1');
    await client.banks.get('b');
    const keys = fake.requests.map((r) => r.headers['idempotency-key']);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], 'import-42');
    assert.ok(keys[3]);
    assert.equal(keys[4], undefined);
  });

  test('reads never send an Idempotency-Key: Recall, Reflect, listings and gets', async () => {
    reset(() => ({ status: 200, json: { items: [], next_cursor: null } }));
    await client.memories.recall('b', 'what do I like?');
    await client.reflect('b', 'what do I like?');
    await client.memories.list('b');
    await client.operations.get('b', 'op1');
    assert.deepEqual(
      fake.requests.map((r) => [r.method, r.headers['idempotency-key']]),
      [
        ['POST', undefined],
        ['POST', undefined],
        ['GET', undefined],
        ['GET', undefined],
      ],
    );
  });

  test('Retry-After in seconds is honoured', async () => {
    reset((n) => (n === 0 ? rateLimited({ 'Retry-After': '1' }) : undefined));
    await client.memories.retain('b', { items: [{ content: 'x' }] });
    assert.deepEqual(waits, [1000], 'waited for Retry-After');
    assert.equal(fake.requests.length, 2);
  });

  test('RateLimit-Reset is honoured when there is no Retry-After', async () => {
    reset((n) => (n === 0 ? rateLimited({ 'RateLimit-Reset': '1' }) : undefined));
    await client.memories.retain('b', { items: [{ content: 'x' }] });
    assert.deepEqual(waits, [1000]);
    assert.equal(fake.requests.length, 2);
  });

  test('429 that never ends: RateLimitError with code and request id after maxRetries', async () => {
    reset(() => rateLimited({ 'Retry-After': '0' }));
    await assert.rejects(
      client.memories.retain('b', { items: [{ content: 'x' }] }, { maxRetries: 3 }),
      (e: unknown) => {
        assert.ok(e instanceof RateLimitError);
        assert.equal(e.status, 429);
        assert.equal(e.code, 'rate_limited');
        assert.equal(e.requestId, 'req-429');
        return true;
      },
    );
    assert.equal(fake.requests.length, 4);
    assert.deepEqual(waits, [0, 0, 0]);
    assert.equal(new Set(fake.requests.map((r) => r.headers['idempotency-key'])).size, 1);
  });

  test('5xx forever: backoff, then InternalServerError carrying the X-Request-Id header', async () => {
    reset(() => ({ status: 503, raw: 'upstream down', headers: { 'X-Request-Id': 'rid-503' } }));
    await assert.rejects(client.memories.recall('b', 'q'), (e: unknown) => {
      assert.ok(e instanceof InternalServerError);
      assert.equal(e.status, 503);
      assert.equal(e.code, 'http_503');
      assert.equal(e.requestId, 'rid-503');
      return true;
    });
    assert.equal(fake.requests.length, 3, 'one call and the default two retries');
    // 0.5 s and 1 s, each with at most 25 % jitter off.
    assertBackoffs(waits, [0, 1]);
  });

  test('408 and 409 are retried; 400 and 404 are not', async () => {
    reset((n) =>
      n === 0
        ? { status: 408, raw: '' }
        : n === 1
          ? { status: 409, json: {}, headers: { 'Retry-After': '0' } }
          : undefined,
    );
    await client.memories.retain('b', { items: [{ content: 'x' }] });
    assert.equal(fake.requests.length, 3);
    // The 408 has no Retry-After: the first backoff; the 409's Retry-After: 0 is no wait.
    assert.equal(waits.length, 2);
    assertBackoffs(waits.slice(0, 1), [0]);
    assert.equal(waits[1], 0);
    for (const status of [400, 404]) {
      reset(() => ({ status, json: { error: { code: 'x', message: 'no', request_id: 'r' } } }));
      await assert.rejects(
        client.banks.get('b'),
        (e: unknown) => (e as { status: number }).status === status,
      );
      assert.equal(fake.requests.length, 1);
      assert.deepEqual(waits, []);
    }
  });

  test('409 idempotency_mismatch and already_done are final: thrown at once, never retried', async () => {
    for (const code of ['idempotency_mismatch', 'already_done']) {
      reset(() => ({
        status: 409,
        json: { error: { code, message: 'final', request_id: 'r', id: 'k1' } },
        headers: { 'Retry-After': '0' },
      }));
      await assert.rejects(
        client.memories.retain('b', { items: [{ content: 'x' }] }, { idempotencyKey: 'k' }),
        (e: unknown) => e instanceof ConflictError && e.code === code && (e.body as any).error.id === 'k1',
      );
      assert.equal(fake.requests.length, 1, code);
      assert.deepEqual(waits, [], code);
    }
  });

  test('a slow server times out per attempt', async () => {
    reset(() => ({ status: 200, json: {}, delayMs: 2000 }));
    await assert.rejects(client.banks.get('b', { timeout: 40, maxRetries: 1 }), APIConnectionTimeoutError);
    assert.equal(fake.requests.length, 2);
    assertBackoffs(waits, [0]);
  });

  test('the caller can abort while a call waits to retry (the real timer)', async () => {
    reset(() => rateLimited({ 'Retry-After': '30' }));
    const timed = new Mnemo({ baseUrl: fake.url, adminToken: 'tok' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = Date.now();
    await assert.rejects(timed.banks.get('b', { signal: ac.signal }), APIUserAbortError);
    assert.ok(Date.now() - started < 5000);
    assert.equal(fake.requests.length, 1);
  });

  test('a refused connection is retried, then APIConnectionError', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts++;
      return fetch(input, init);
    };
    const dead = new Mnemo({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1, fetch: counting, sleep });
    waits.length = 0;
    await assert.rejects(
      dead.health(),
      (e: unknown) => e instanceof APIConnectionError && e.code === 'connection_error',
    );
    assert.equal(attempts, 2);
    assertBackoffs(waits, [0]);
  });
});

describe('retry delays', () => {
  test('serverDelayMs reads Retry-After-Ms, Retry-After (seconds or date) and RateLimit-Reset', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    assert.equal(serverDelayMs(new Headers({ 'retry-after-ms': '250' }), now), 250);
    assert.equal(serverDelayMs(new Headers({ 'retry-after': '2' }), now), 2000);
    assert.equal(serverDelayMs(new Headers({ 'retry-after': '0.5' }), now), 500);
    assert.equal(serverDelayMs(new Headers({ 'retry-after': 'Mon, 01 Jan 2024 00:00:03 GMT' }), now), 3000);
    assert.equal(serverDelayMs(new Headers({ 'retry-after': 'Sun, 31 Dec 2023 00:00:00 GMT' }), now), 0);
    assert.equal(serverDelayMs(new Headers({ 'ratelimit-reset': '7' }), now), 7000);
    assert.equal(
      serverDelayMs(new Headers({ 'retry-after': '3600' }), now),
      undefined,
      'too long: own backoff',
    );
    assert.equal(serverDelayMs(new Headers({ 'retry-after': 'soon' }), now), undefined);
    assert.equal(serverDelayMs(new Headers(), now), undefined);
  });

  test('backoff doubles from 0.5 s up to 8 s with at most 25 % jitter', () => {
    for (const [attempt, base] of [
      [0, 500],
      [1, 1000],
      [3, 4000],
      [10, 8000],
    ] as const) {
      for (let i = 0; i < 50; i++) {
        const d = backoffMs(attempt);
        assert.ok(d <= base && d >= base * 0.75, `${attempt}: ${d}`);
      }
    }
  });
});
