/**
 * Property-based fuzzing of every endpoint (fast-check) through the in-process app: random and
 * adversarial methods, paths (encoded and broken ids), query strings, headers (content types,
 * credentials), bodies (near-valid, random JSON, deep JSON, huge and tiny numbers, invalid
 * UTF-8, BOM, unicode edge cases). For every request: never a 5xx, never a hang, every error
 * body has the documented shape with a matching request id, and a rejected request leaves the
 * stored data exactly as it was (a fingerprint of every data table, taken before and after).
 *
 * A few thousand requests per engine in `npm test`; `MNEMO_SOAK=1` (npm run soak) runs
 * 100,000, and `MNEMO_FUZZ_RUNS=n` sets any count. `MNEMO_FUZZ_SEED` replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createApp } from '../../src/api/app.js';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { ERROR_STATUS } from '../../src/core/errors.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { storeOver } from '../../src/store/open.js';
import { openPglite } from '../../src/store/pglite.js';
import { openPostgres } from '../../src/store/postgres.js';
import { compose } from '../../src/runtime/compose.js';
import { createTestDatabase, ENGINES, type EngineName, type TestDatabase } from '../helpers/engines.js';
import { type Shape, requestArbitrary } from './requests.js';

const RUNS = Number(process.env.MNEMO_FUZZ_RUNS ?? (process.env.MNEMO_SOAK ? 100_000 : 1_500));
/**
 * `npm test` replays a fixed seed, so a red CI is reproducible and not luck; the soak (and
 * MNEMO_FUZZ_SEED=random) explores new ones. A failure prints its seed and path.
 */
const SEED = process.env.MNEMO_FUZZ_SEED
  ? process.env.MNEMO_FUZZ_SEED === 'random'
    ? undefined
    : Number(process.env.MNEMO_FUZZ_SEED)
  : process.env.MNEMO_SOAK
    ? undefined
    : 20261122;
const ADMIN = 'fuzz-admin-token';
/** A request that takes longer than this is a hang. */
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * A digest of every stored row a request could change (audit entries, rate counters,
 * idempotency claims and key usage times are bookkeeping, recorded for rejected requests too).
 */
const FINGERPRINT = `SELECT md5(coalesce(string_agg(x, '|' ORDER BY x), '')) AS h FROM (
  SELECT concat_ws('/', 'p', id, name, limits::text) FROM projects
  UNION ALL SELECT concat_ws('/', 'k', id, project_id, name, array_to_string(scopes, ','), revoked_at::text, expires_at::text) FROM api_keys
  UNION ALL SELECT concat_ws('/', 's', project_id, id, name) FROM spaces
  UNION ALL SELECT concat_ws('/', 'b', project_id, id, space_id, name, mission, config::text, embedder, memory_count, term_total) FROM banks
  UNION ALL SELECT concat_ws('/', 'm', project_id, bank_id, id::text, type, text, context, tags::text, metadata::text, document_id) FROM memories
  UNION ALL SELECT concat_ws('/', 't', project_id, bank_id, term, df) FROM bank_terms
  UNION ALL SELECT concat_ws('/', 'e', project_id, bank_id, name_key, type, mention_count, aliases::text) FROM entities
  UNION ALL SELECT concat_ws('/', 'd', project_id, bank_id, id, content_hash, memory_count) FROM documents
  UNION ALL SELECT concat_ws('/', 'r', project_id, bank_id, id::text, text, priority, active, tags::text) FROM directives
  UNION ALL SELECT concat_ws('/', 'o', project_id, bank_id, id::text, kind, status) FROM operations
) f(x)`;

interface Harness {
  app: ReturnType<typeof createApp>;
  db: Db;
  /** Error log lines (each unhandled error the app logged). */
  errors: string[];
  keys: { valid: string; revoked: string; narrow: string };
  close(): Promise<void>;
}

async function harness(engine: EngineName): Promise<Harness> {
  let pgdb: TestDatabase | undefined;
  let db: Db;
  if (engine === 'postgres') {
    pgdb = await createTestDatabase();
    db = await openPostgres(pgdb.url!, { poolSize: 4 });
  } else db = await openPglite();
  await migrate(db);
  const config = loadConfig({ adminToken: ADMIN, logLevel: 'silent' }, {});
  const runtime = await compose(config, { store: storeOver(db) });
  // Unhandled errors are kept: a 500 found is reported with its cause.
  const errors: string[] = [];
  const app = createApp(runtime, createLogger('error', { write: (line: string) => errors.push(line) }));
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  // Data for the rejected requests to leave alone.
  const bank = '/v1/default/banks/fuzz%40example.com';
  await admin('POST', `${bank}/memories`, {
    document_id: 'doc-1',
    items: [
      {
        content: 'Alice adopted a beagle named Pepper',
        entities: [{ text: 'Alice', type: 'PERSON' }],
        tags: ['pets'],
      },
      {
        content: 'Alice moved to Lisbon in 2021',
        timestamp: '2024-05-08T13:56:00Z',
        metadata: { source: 'chat' },
      },
    ],
  });
  await admin('POST', '/v1/default/spaces', { id: 'acme', name: 'Acme' });
  await admin('PUT', '/v1/default/spaces/acme/banks/fuzz%40example.com');
  await admin('POST', `${bank}/directives`, { name: 'tone', text: 'Answer briefly.' });
  await admin('POST', '/v1/default/banks/seeded/memories', {
    async: true,
    items: [{ content: 'queued, never run' }],
  });
  await admin('POST', '/v1/default/projects', { id: 'fuzzproj', name: 'Fuzz' });
  const valid = await admin('POST', '/v1/default/projects/fuzzproj/keys', {
    name: 'all',
    scopes: ['retain', 'recall', 'graph:read', 'admin', 'mcp'],
  });
  const narrow = await admin('POST', '/v1/default/projects/fuzzproj/keys', {
    name: 'recall',
    scopes: ['recall'],
  });
  const revoked = await admin('POST', '/v1/default/projects/fuzzproj/keys', {
    name: 'gone',
    scopes: ['recall'],
  });
  await admin('DELETE', `/v1/default/projects/fuzzproj/keys/${revoked.id}`);
  return {
    app,
    db,
    errors,
    keys: { valid: valid.key, revoked: revoked.key, narrow: narrow.key },
    async close() {
      await db.close();
      await pgdb?.drop();
    },
  };
}

async function fingerprint(db: Db): Promise<string> {
  return (await db.query<{ h: string }>(FINGERPRINT))[0]!.h;
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });

/** Checks one answer; returns a problem description or null. */
function problemWith(shape: Shape, status: number, headers: Headers, text: string): string | null {
  if (status >= 500) return `status ${status}: ${text.slice(0, 300)}`;
  const requestId = headers.get('x-request-id');
  if (!requestId) return 'no X-Request-Id header';
  if (status < 400 || shape.method === 'HEAD') return null;
  // MCP's transport answers a GET (no event stream offered) with a bare 405, as its spec says.
  if (shape.path.startsWith('/mcp') && status === 405) return null;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `error body is not JSON: ${text.slice(0, 200)}`;
  }
  // The MCP endpoint answers protocol errors in JSON-RPC form, as the protocol requires.
  if (shape.path.startsWith('/mcp') && body?.jsonrpc === '2.0') {
    return typeof body.error?.code === 'number' && typeof body.error?.message === 'string'
      ? null
      : `bad JSON-RPC error: ${text.slice(0, 200)}`;
  }
  const e = body?.error;
  if (!e || typeof e !== 'object') return `no error object: ${text.slice(0, 200)}`;
  if (!(e.code in ERROR_STATUS)) return `unknown error code ${e.code}`;
  if (ERROR_STATUS[e.code as keyof typeof ERROR_STATUS] !== status)
    return `code ${e.code} with status ${status}`;
  if (typeof e.message !== 'string' || e.message.length === 0) return 'empty error message';
  if (e.request_id !== requestId) return `request_id ${e.request_id} is not the header's ${requestId}`;
  if (/\n\s+at .*\(.*:\d+:\d+\)/.test(text)) return 'a stack trace in the body';
  return null;
}

for (const engine of ENGINES) {
  describe(`fuzzing every endpoint (${engine})`, { timeout: 24 * 3_600_000 }, () => {
    let h: Harness;
    before(async () => {
      h = await harness(engine);
    });
    after(() => h?.close());

    test('a NUL character is refused before anything is stored (found by fuzzing)', async () => {
      const was = await fingerprint(h.db);
      const send = (body: string) =>
        h.app.request('/v1/default/banks/new-bank-nul/memories', {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body,
        });
      const refused = await send('{"items":[{"content":"a\\u0000b"}]}');
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as any).error.code, 'validation_error');
      assert.equal(await fingerprint(h.db), was, 'no bank was created');
      // An escaped backslash followed by "u0000" is ordinary text.
      const stored = await send('{"items":[{"content":"literally \\\\u0000"}]}');
      assert.equal(stored.status, 200);
    });

    test('a body nested deeper than 64 levels is a 400 on every endpoint (found by fuzzing: a 500 on PATCH config)', async () => {
      const inner = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`;
      const was = await fingerprint(h.db);
      for (const [method, path] of [
        ['PATCH', '/v1/default/banks/deep-bank/config'],
        ['POST', '/v1/default/banks/deep-bank/memories'],
        ['POST', '/v1/default/banks/deep-bank/memories/recall'],
      ] as const) {
        const r = await h.app.request(path, {
          method,
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: `{"items":[{"content":"deep","metadata":${inner}}],"query":${inner},"updates":${inner}}`,
        });
        assert.equal(r.status, 400, path);
        assert.match(((await r.json()) as any).error.message, /deeper than 64 levels/);
      }
      assert.equal(await fingerprint(h.db), was);
      // Brackets inside strings are text, not nesting.
      const ok = await h.app.request('/v1/default/banks/deep-bank/memories', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ content: `${'[{'.repeat(100)} \\" ${'}]'.repeat(100)}` }] }),
      });
      assert.equal(ok.status, 200);
    });

    test('an unpaired surrogate is refused before anything is stored (found by fuzzing)', async () => {
      const send = (bank: string, body: string) =>
        h.app.request(`/v1/default/banks/${bank}/memories`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body,
        });
      const was = await fingerprint(h.db);
      for (const content of ['\\ud800', 'x\\udc00y', '\\udbff\\ud800']) {
        const refused = await send('new-bank-surrogate', `{"items":[{"content":"${content}"}]}`);
        assert.equal(refused.status, 400, content);
        assert.match(((await refused.json()) as any).error.message, /unpaired UTF-16 surrogate/);
      }
      const inKey = await send(
        'new-bank-surrogate',
        '{"items":[{"content":"k","metadata":{"\\ud800":"v"}}]}',
      );
      assert.equal(inKey.status, 400);
      assert.equal(await fingerprint(h.db), was, 'no bank was created');
      // A pair, escaped or not, is one ordinary character.
      const pair = await send('emoji-bank', '{"items":[{"content":"\\ud83d\\ude00 and 😀"}]}');
      assert.equal(pair.status, 200);
    });

    test(`${RUNS} random and adversarial requests: no 5xx, no hang, valid errors, rejected requests change nothing`, async () => {
      const statuses = new Map<number, number>();
      let built = 0;
      let before = await fingerprint(h.db);
      const out = await fc.check(
        fc.asyncProperty(requestArbitrary(h.keys, ADMIN), async (shape) => {
          let req: Request;
          try {
            req = new Request(`http://localhost${shape.path}`, {
              method: shape.method,
              headers: shape.headers,
              body:
                shape.method === 'GET' || shape.method === 'HEAD'
                  ? undefined
                  : (shape.body as BodyInit | undefined),
            });
          } catch {
            return; // not a request any HTTP client could send (e.g. a header value outside Latin-1)
          }
          built++;
          const res = await withTimeout(
            Promise.resolve(h.app.request(req)),
            REQUEST_TIMEOUT_MS,
            `${shape.method} ${shape.path}`,
          );
          const text = await withTimeout(res.text(), REQUEST_TIMEOUT_MS, 'reading the body');
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const problem = problemWith(shape, res.status, res.headers, text);
          assert.equal(problem, null, `${problem}\n${h.errors.slice(-1).join('')}`);
          const [was, now] = [before, await fingerprint(h.db)];
          before = now;
          if (res.status >= 400)
            assert.equal(now, was, `the rejected request (${res.status}) changed stored data`);
        }),
        // No shrinking: the app's state moves on with every request, so a smaller replay is not the same case.
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      if (out.failed) {
        const shown = JSON.stringify(out.counterexample?.[0], (_, v) =>
          v instanceof Uint8Array ? `bytes:${Buffer.from(v).toString('hex')}` : v,
        ).slice(0, 2000);
        const cause =
          out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
        assert.fail(
          `after ${out.numRuns} requests (seed ${out.seed}, path ${out.counterexample ? out.counterexamplePath : ''}):\n${shown}\n${cause}`,
        );
      }
      const summary = [...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`);
      // Most requests must reach a handler and be answered for a reason, not all bounce off one check.
      assert.ok(built > RUNS * 0.9, `requests built: ${built}`);
      assert.ok((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0) > 0, `some requests succeed: ${summary}`);
      assert.ok(
        [400, 401, 404].every((s) => (statuses.get(s) ?? 0) > 0),
        `statuses: ${summary}`,
      );
    });
  });
}
