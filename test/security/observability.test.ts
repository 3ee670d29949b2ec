import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { compose } from '../../src/runtime/compose.js';
import { createOpenAIModel } from '../../src/llm/index.js';
import { openStore } from '../../src/store/open.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { metricSample as sample } from '../helpers/prometheus.js';
import { wrongSecret } from '../helpers/keys.js';
import { until } from '../helpers/until.js';

const ADMIN = 'observability-admin-token';

/** Collects pino's JSON lines. */
function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, records: () => lines.map((l) => JSON.parse(l)) };
}

for (const engine of ENGINES) {
  describe(`metrics and request logs (${engine})`, () => {
    let fake: FakeOpenAI;
    let store: Awaited<ReturnType<typeof openTestStore>>;
    let call: (method: string, path: string, token?: string | null, body?: unknown) => Promise<Response>;
    const sink = logSink();

    before(async () => {
      fake = await startFakeOpenAI();
      store = await openTestStore(engine);
      const config = loadConfig({ adminToken: ADMIN, logLevel: 'info' }, {});
      const runtime = await compose(config, {
        store,
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', apiKey: 'sk-never-logged' }),
      });
      const app = createApp(runtime, createLogger('info', sink.stream));
      call = async (method, path, token = ADMIN, body) =>
        app.request(path, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
    });
    after(async () => {
      await store.dispose();
      await fake.close();
    });

    test('request logs carry request id, project, bank, route, status and duration, and never a key', async () => {
      const created = await (
        await call('POST', '/v1/default/projects/default/keys', ADMIN, {
          name: 'logged',
          scopes: ['retain', 'recall'],
        })
      ).json();
      const key: string = created.key;
      const secret = key.slice(16);
      const r = await call('POST', '/v1/me/banks/log%40bank/memories', key, {
        items: [{ content: 'log me not' }],
      });
      assert.equal(r.status, 200);
      const requestId = r.headers.get('x-request-id');
      assert.equal((await call('GET', '/v1/me/banks/log%40bank/memories', wrongSecret(key))).status, 401);
      assert.equal((await call('GET', '/v1/default/banks/x', 'wrong-operator-token')).status, 401);
      assert.equal((await call('GET', `/v1/default/banks/x?api_key=${key}`, null)).status, 401);
      const line = sink.records().find((x) => x.msg === 'request' && x.requestId === requestId);
      assert.ok(line, 'the request was logged');
      assert.equal(line.project, 'default');
      assert.equal(line.bank, 'log@bank');
      assert.equal(line.route, '/v1/me/banks/:bank/memories');
      assert.equal(line.status, 200);
      assert.equal(line.method, 'POST');
      assert.equal(typeof line.ms, 'number');
      const all = sink.lines.join('\n');
      for (const s of [secret, ADMIN, 'wrong-operator-token', 'sk-never-logged', key.slice(0, -3)]) {
        assert.ok(!all.includes(s), `logs must not contain ${s.slice(0, 6)}…`);
      }
      assert.ok(sink.records().filter((x) => x.msg === 'request').length >= 5);
    });

    test('/metrics: per route pattern counts and latencies, embedder and model latency, queue depth, pool', async () => {
      await call('POST', '/v1/default/banks/metric-bank-7731/memories', ADMIN, {
        items: [{ content: 'counted' }],
      });
      await call('POST', '/v1/default/banks/metric-bank-7731/memories/recall', ADMIN, { query: 'counted' });
      await call('POST', '/v1/default/banks/metric-bank-7731/reflect', ADMIN, { query: 'what was counted?' });
      await call('GET', '/v1/default/no/such/route');
      const res = await call('GET', '/metrics', null);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
      const text = await res.text();
      const route = '/v1/default/banks/:bank/memories';
      assert.equal(sample(text, 'mnemo_http_requests_total', { method: 'POST', route, status: '200' }), 1);
      assert.equal(
        sample(text, 'mnemo_http_request_duration_seconds_count', {
          method: 'POST',
          route: `${route}/recall`,
        }),
        1,
      );
      assert.ok(sample(text, 'mnemo_http_request_duration_seconds_bucket', { route, le: '+Inf' }) === 1);
      assert.equal(sample(text, 'mnemo_http_requests_total', { route: 'unmatched', status: '404' }), 1);
      assert.ok(!text.includes('metric-bank-7731'), 'raw paths never become labels');
      assert.ok((sample(text, 'mnemo_embed_duration_seconds_count', { outcome: 'ok' }) ?? 0) >= 2);
      assert.ok(
        (sample(text, 'mnemo_llm_duration_seconds_count', { provider: 'openai', model: 'fake-model' }) ??
          0) >= 1,
      );
      // queue depth is read from the database at scrape time (retains may queue follow-up work)
      assert.equal(sample(text, 'mnemo_operations_queue_depth'), await store.countPendingOperations());
      if (engine === 'postgres') {
        assert.ok((sample(text, 'mnemo_db_pool_connections', { state: 'total' }) ?? 0) >= 1);
        assert.ok((sample(text, 'mnemo_db_pool_connections', { state: 'waiting' }) ?? -1) >= 0);
        assert.ok((sample(text, 'mnemo_db_pool_connections', { state: 'in_use' }) ?? -1) >= 0);
        assert.equal(
          sample(text, 'mnemo_embedded_engine_bytes', { kind: 'heap' }),
          undefined,
          'no embedded engine',
        );
      } else {
        const cache = sample(text, 'mnemo_embedded_engine_bytes', { kind: 'cache' }) ?? 0;
        const used = sample(text, 'mnemo_embedded_engine_bytes', { kind: 'cache_used' }) ?? 0;
        assert.ok(cache >= 16 * 2 ** 20, `page cache ${cache}`);
        assert.ok(used > 0 && used <= cache, `cache in use ${used} of ${cache}`);
        assert.ok(
          (sample(text, 'mnemo_embedded_engine_bytes', { kind: 'heap' }) ?? 0) > cache,
          'heap holds the cache',
        );
        assert.equal(
          sample(text, 'mnemo_db_pool_connections', { state: 'total' }),
          undefined,
          'no pool in PGlite',
        );
      }
      assert.ok(text.includes('process_cpu_user_seconds_total'), 'process metrics');
    });

    test('/metrics: the live JavaScript heap, as left by the latest full garbage collection', async () => {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      gc();
      // The GC observer reports asynchronously: wait for the report (the gauge reads 0 until
      // then), not for a fixed 50 ms, which a loaded machine did not always give it (live heap 0).
      const text = await until(
        async () => (await call('GET', '/metrics', null)).text(),
        (t) => (sample(t, 'mnemo_heap_live_bytes') ?? 0) > 0,
      );
      const live = sample(text, 'mnemo_heap_live_bytes') ?? 0;
      const total = sample(text, 'nodejs_heap_size_total_bytes') ?? 0;
      assert.ok(live > 1e6 && live <= total, `live heap ${live} of ${total}`);
    });
  });

  describe(`readiness (${engine})`, () => {
    test('/health/ready is 503 once the database is unreachable; /health and /health/live stay up', async () => {
      const store = await openTestStore(engine);
      const runtime = await compose(loadConfig({ logLevel: 'silent' }, {}), { store });
      const app = createApp(runtime, createLogger('silent'));
      const ready = await app.request('/health/ready');
      assert.equal(ready.status, 200);
      // PGlite: the database is closed; PostgreSQL: the database is dropped under the open pool.
      await store.dispose();
      const down = await app.request('/health/ready');
      assert.equal(down.status, 503);
      assert.equal((await down.json()).status, 'unavailable');
      assert.equal((await app.request('/health')).status, 200);
      // Liveness reads no database: an orchestrator never restarts a process for a slow one.
      const live = await app.request('/health/live');
      assert.equal(live.status, 200);
      const body = await live.json();
      assert.equal(body.status, 'alive');
      assert.ok(body.uptime_seconds >= 0 && typeof body.version === 'string');
    });
  });
}

describe('a dead PostgreSQL', () => {
  test('the server does not start: a clear error naming the host', async () => {
    await assert.rejects(
      openStore({ databaseUrl: 'postgres://postgres@127.0.0.1:1/nothing' }),
      (err: Error) => {
        assert.match(err.message, /cannot connect to PostgreSQL at 127\.0\.0\.1:1\/nothing/);
        return true;
      },
    );
  });
});
