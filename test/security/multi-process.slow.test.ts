/**
 * Two real `mnemo serve` processes on one PostgreSQL: rate limits, quotas and key revocation
 * are decided in the database, so each process sees what the other counted or revoked.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/engines.js';
import { type ChildServer, http, startChildServer } from './servers.js';

const ADMIN = 'multi-process-admin-token';

/** Fixed one-minute windows: start a burst early in a minute so it cannot straddle two. */
async function earlyInAMinute(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 40_000) await new Promise((r) => setTimeout(r, 60_000 - into + 200));
}

describe('several mnemo processes on one PostgreSQL', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  let db: TestDatabase;
  let a: ChildServer;
  let b: ChildServer;
  let key = '';
  let keyId = '';

  before(async () => {
    db = await createTestDatabase();
    const env = {
      MNEMO_DATABASE_URL: db.url!,
      MNEMO_ADMIN_TOKEN: ADMIN,
      MNEMO_WORKER: 'false',
      MNEMO_MASTER_KEY: randomBytes(32).toString('base64'),
    };
    [a, b] = await Promise.all([startChildServer(env), startChildServer(env)]);
    assert.equal(
      (await http(a.url, 'POST', '/v1/default/projects', { token: ADMIN, body: { id: 'shared', name: 'S' } }))
        .status,
      201,
    );
    const k = await http(a.url, 'POST', '/v1/default/projects/shared/keys', {
      token: ADMIN,
      body: { name: 'agent', scopes: ['retain', 'recall', 'admin'] },
    });
    key = k.body.key;
    keyId = k.body.id;
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
  });

  test('requests per minute are counted across both processes', async () => {
    const limit = await http(a.url, 'PATCH', '/v1/default/projects/shared', {
      token: ADMIN,
      body: { limits: { requests_per_minute: 6 } },
    });
    assert.equal(limit.status, 200);
    await earlyInAMinute();
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const server = i % 2 === 0 ? a : b;
      const r = await http(server.url, 'GET', '/v1/me/spaces', { token: key });
      assert.equal(r.status, 200, `request ${i} on ${server === a ? 'A' : 'B'}`);
      remaining.push(r.headers.get('ratelimit-remaining')!);
    }
    assert.deepEqual(remaining, ['5', '4', '3', '2', '1', '0']);
    for (const server of [a, b]) {
      const r = await http(server.url, 'GET', '/v1/me/spaces', { token: key });
      assert.equal(r.status, 429);
      assert.equal(r.body.error.code, 'rate_limited');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    }
    await http(a.url, 'PATCH', '/v1/default/projects/shared', {
      token: ADMIN,
      body: { limits: { requests_per_minute: null } },
    });
  });

  test('retained items per day are one count for both processes', async () => {
    await http(a.url, 'PATCH', '/v1/default/projects/shared', {
      token: ADMIN,
      body: { limits: { retained_items_per_day: 4 } },
    });
    const retain = (server: ChildServer, n: number) =>
      http(server.url, 'POST', `/v1/me/banks/b/memories`, {
        token: key,
        body: { items: Array.from({ length: n }, (_, i) => ({ content: `item ${i} via ${server.url}` })) },
      });
    assert.equal((await retain(a, 2)).status, 200);
    assert.equal((await retain(b, 2)).status, 200);
    const over = await retain(a, 1);
    assert.equal(over.status, 429);
    assert.equal(over.body.error.limit, 'retained_items_per_day');
    const p = await http(b.url, 'GET', '/v1/default/projects/shared', { token: ADMIN });
    assert.equal(p.body.usage.retained_items_today, 4);
    assert.equal(p.body.usage.stored_memories, 4);
  });

  test('a cost budget is charged atomically by both processes: concurrent Retains never exceed it', async () => {
    await http(a.url, 'POST', '/v1/default/projects', { token: ADMIN, body: { id: 'costs', name: 'C' } });
    const k = await http(b.url, 'POST', '/v1/default/projects/costs/keys', {
      token: ADMIN,
      body: { name: 'agent', scopes: ['retain', 'recall'] },
    });
    const retain = (server: ChildServer, content: string) =>
      http(server.url, 'POST', '/v1/me/banks/c/memories', {
        token: k.body.key,
        body: { items: [{ content }] },
      });
    assert.equal((await retain(a, 'seed')).status, 200); // the bank exists: the race is on the budget
    await http(a.url, 'PATCH', '/v1/default/projects/costs', {
      token: ADMIN,
      body: { limits: { characters_per_day: 4 + 500 } },
    });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        retain(i % 2 ? a : b, `${String(i).padStart(2, '0')} ${'y'.repeat(47)}`),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual([...new Set(statuses)], [200, 429]);
    assert.equal(
      statuses.filter((x) => x === 200).length,
      10,
      'exactly 500 / 50 Retains, across both processes',
    );
    const over = results.find((r) => r.status === 429)!;
    assert.equal(over.body.error.limit, 'characters_per_day');
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    const p = await http(b.url, 'GET', '/v1/default/projects/costs', { token: ADMIN });
    assert.equal(p.body.usage.budgets.characters_per_day, 504);
    assert.equal(p.body.usage.stored_memories, 11);
  });

  test('a key revoked through one process is refused at once by the other', async () => {
    assert.equal((await http(b.url, 'GET', '/v1/me/audit', { token: key })).status, 200);
    const revoked = await http(a.url, 'DELETE', `/v1/default/projects/shared/keys/${keyId}`, {
      token: ADMIN,
    });
    assert.equal(revoked.status, 200);
    const r = await http(b.url, 'GET', '/v1/me/audit', { token: key });
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'unauthenticated');
    // and neither process ever logged the key
    const secret = key.slice(16);
    for (const server of [a, b]) {
      assert.ok(server.output().includes('"msg":"request"'), 'request logs are written');
      assert.ok(!server.output().includes(secret), 'no key in the logs');
    }
  });

  test('50 concurrent config writers spread over both processes lose no update', async () => {
    const keys: [string, unknown][] = [
      ['retain_extraction_mode', 'verbose'],
      ['retain_auto_entities', true],
      ['retain_mission', 'retain mission'],
      ['reflect_mission', 'reflect mission'],
      ['enable_observations', false],
      ['enable_temporal_retrieval', false],
      ['enable_graph_retrieval', false],
      ['enable_reranking', false],
      ['disposition_skepticism', 5],
      ['disposition_literalism', 1],
      ['disposition_empathy', 4],
      ['recall_default_budget', 'high'],
    ];
    const path = '/v1/default/banks/contended';
    assert.equal((await http(a.url, 'PUT', path, { token: ADMIN, body: {} })).status, 200);
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const updates =
          i === 0 ? { encryption: 'managed' } : Object.fromEntries([keys[(i - 1) % keys.length]!]);
        return http((i % 2 ? b : a).url, 'PATCH', `${path}/config`, { token: ADMIN, body: { updates } });
      }),
    );
    for (const r of replies) assert.equal(r.status, 200, JSON.stringify(r.body));
    const view = await http(b.url, 'GET', `${path}/config`, { token: ADMIN });
    assert.deepEqual(view.body.overrides, Object.fromEntries([['encryption', 'managed'], ...keys]));
  });
});
