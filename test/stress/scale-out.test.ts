/**
 * Scale-out: two `mnemo serve` processes (no in-process worker) and two `mnemo worker`
 * processes on one fresh PostgreSQL database. Sync and async Retains and Recalls go to both
 * servers at once; afterwards every memory is stored once, both servers report the same
 * counts, every operation ran exactly once, rate limits are one count, and a bank deleted or a
 * key revoked through one server is gone for the other.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/engines.js';
import { integrityProblems } from './integrity.js';
import {
  bankPath,
  call,
  type MnemoChild,
  startServe,
  startWorkerProcess,
  unhandledErrors,
  waitFor,
} from './helpers.js';

const skip = process.env.MNEMO_TEST_DATABASE_URL
  ? false
  : 'MNEMO_TEST_DATABASE_URL is not set (needs PostgreSQL)';

/** Runs `tasks` with at most `limit` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

/** Every memory of a bank, through the paged listing. */
async function allMemories(
  base: string,
  bank: string,
): Promise<{ id: string; text: string; type: string }[]> {
  const items: { id: string; text: string; type: string }[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const r = await call(base, 'GET', bankPath(bank, `/memories?limit=500${q}`));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    items.push(...r.body.items);
    cursor = r.body.next_cursor;
  } while (cursor);
  return items;
}

/** Waits until no operation of the bank is pending or processing. */
async function drained(base: string, bank: string): Promise<void> {
  await waitFor(
    `operations of ${bank} to finish`,
    async () => {
      for (const status of ['pending', 'processing']) {
        const r = await call(base, 'GET', bankPath(bank, `/operations?status=${status}&limit=1`));
        if (r.status !== 200 || r.body.items.length > 0) return undefined;
      }
      return true;
    },
    240_000,
  );
}

describe('scale-out: two servers and two workers on one PostgreSQL', { skip, timeout: 900_000 }, () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let a: MnemoChild;
  let b: MnemoChild;
  const workers: MnemoChild[] = [];

  before(async () => {
    db = await createTestDatabase();
    // All four start at once: migrations run under an advisory lock, so they must not trip over each other.
    const env = { MNEMO_LOG_LEVEL: 'info' };
    const started = await Promise.all([
      startServe({ databaseUrl: db.url }),
      startServe({ databaseUrl: db.url }),
      startWorkerProcess(db.url!, env),
      startWorkerProcess(db.url!, env),
    ]);
    [a, b] = started;
    workers.push(started[2], started[3]);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await Promise.all([a?.stop(), b?.stop(), ...workers.map((w) => w.stop())]);
    await db?.drop();
  });

  test('concurrent sync and async retains and recalls on both servers store every item exactly once', async () => {
    const bank = 'scale@example.com';
    const servers = [a, b];
    const SYNC = 40;
    const ASYNC = 20;
    const expected = new Set<string>();
    const tasks: (() => Promise<unknown>)[] = [];
    const opIds: string[] = [];
    for (let i = 0; i < SYNC; i++) {
      const items = [0, 1].map((j) => ({
        content: `sync fact ${i}.${j} about the harbour`,
        fact_type: 'world',
      }));
      for (const it of items) expected.add(it.content);
      const server = servers[i % 2]!;
      tasks.push(async () => {
        const r = await call(server.url, 'POST', bankPath(bank, '/memories'), { body: { items } });
        assert.equal(r.status, 200, `${JSON.stringify(r.body)}\n${unhandledErrors(server).join('\n')}`);
        assert.equal(r.body.memories_created, 2);
      });
      tasks.push(async () => {
        const r = await call(servers[(i + 1) % 2]!.url, 'POST', bankPath(bank, '/memories/recall'), {
          body: { query: `what about the harbour ${i}?` },
        });
        // The first recalls may run before the bank exists.
        assert.ok(r.status === 200 || r.status === 404, JSON.stringify(r.body));
      });
    }
    for (let i = 0; i < ASYNC; i++) {
      const items = [0, 1, 2].map((j) => ({
        content: `async fact ${i}.${j} about the lighthouse`,
        fact_type: 'world',
      }));
      for (const it of items) expected.add(it.content);
      const operationId = randomUUID();
      opIds.push(operationId);
      // The same client-chosen operation id goes to both servers: it must be queued once.
      for (const server of servers) {
        tasks.push(async () => {
          const r = await call(server.url, 'POST', bankPath(bank, '/memories'), {
            body: { async: true, operation_id: operationId, items },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
          assert.equal(r.body.operation_id, operationId);
        });
      }
    }
    // Interleave the kinds of request, 16 in flight.
    tasks.sort(() => Math.random() - 0.5);
    await pool(tasks, 16);

    for (const id of opIds) {
      const op = await waitFor(
        `operation ${id}`,
        async () => {
          const r = await call(b.url, 'GET', bankPath(bank, `/operations/${id}`));
          return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
        },
        240_000,
      );
      assert.equal(op.status, 'completed', JSON.stringify(op));
      assert.equal(op.memories_created, 3);
    }
    await drained(a.url, bank);

    const [fromA, fromB] = await Promise.all([allMemories(a.url, bank), allMemories(b.url, bank)]);
    const facts = fromA.filter((m) => m.type !== 'observation').map((m) => m.text);
    assert.equal(facts.length, expected.size, 'one memory per retained item');
    assert.deepEqual(new Set(facts), expected, 'every retained item is there');
    assert.deepEqual(
      fromB.map((m) => m.id).sort(),
      fromA.map((m) => m.id).sort(),
      'both servers list the same memories',
    );
    const [pa, pb] = await Promise.all([
      call(a.url, 'GET', bankPath(bank)),
      call(b.url, 'GET', bankPath(bank)),
    ]);
    assert.equal(pa.body.memory_count, fromA.length);
    assert.equal(pb.body.memory_count, fromA.length);
    assert.equal(pa.body.entity_count, pb.body.entity_count);

    // Each queued operation id was queued once and run once, by one of the two workers.
    const listed = await call(a.url, 'GET', bankPath(bank, '/operations?limit=500'));
    const retains = listed.body.items.filter(
      (o: { kind?: string; items_count: number }) => o.items_count === 3,
    );
    assert.equal(retains.length, ASYNC);
    const logs = workers.map((w) => w.output()).join('\n');
    for (const id of opIds) {
      const runs = logs
        .split('\n')
        .filter((l) => l.includes('"operation completed"') && l.includes(id)).length;
      assert.equal(runs, 1, `operation ${id} completed ${runs} times`);
    }
    assert.deepEqual(await integrityProblems({ query: async (q, p) => (await sql.query(q, p)).rows }), []);
    assert.deepEqual([a, b, ...workers].flatMap(unhandledErrors), [], 'no process logged an unhandled error');
  });

  test('the same Idempotency-Key sent to both servers writes once', async () => {
    const bank = 'idem';
    const key = randomUUID();
    const body = { items: [{ content: 'written once through two servers', fact_type: 'world' }] };
    const first = await call(a.url, 'POST', bankPath(bank, '/memories'), {
      body,
      headers: { 'idempotency-key': key },
    });
    const second = await call(b.url, 'POST', bankPath(bank, '/memories'), {
      body,
      headers: { 'idempotency-key': key },
    });
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(second.body.memory_ids, first.body.memory_ids);
    const listed = await allMemories(b.url, bank);
    assert.equal(listed.filter((m) => m.type !== 'observation').length, 1);
  });

  test('requests per minute are one budget for both servers, also when they arrive at once', async () => {
    assert.equal(
      (await call(a.url, 'POST', '/v1/default/projects', { body: { id: 'limited', name: 'Limited' } }))
        .status,
      201,
    );
    const k = await call(b.url, 'POST', '/v1/default/projects/limited/keys', {
      body: { name: 'agent', scopes: ['retain', 'recall'] },
    });
    assert.equal(k.status, 201);
    const LIMIT = 10;
    const set = await call(a.url, 'PATCH', '/v1/default/projects/limited', {
      body: { limits: { requests_per_minute: LIMIT } },
    });
    assert.equal(set.status, 200);
    // Fixed one-minute windows: start early in a minute so the burst stays in one.
    const into = Date.now() % 60_000;
    if (into > 30_000) await new Promise((r) => setTimeout(r, 60_000 - into + 200));
    const burst = await Promise.all(
      Array.from({ length: 3 * LIMIT }, (_, i) =>
        call([a, b][i % 2]!.url, 'POST', '/v1/me/banks/lim/memories/recall', {
          token: k.body.key,
          body: { query: 'x' },
        }),
      ),
    );
    const passed = burst.filter((r) => r.status !== 429);
    const limited = burst.filter((r) => r.status === 429);
    assert.equal(passed.length, LIMIT, `statuses: ${burst.map((r) => r.status).join(',')}`);
    assert.equal(limited.length, 2 * LIMIT);
    for (const r of limited) assert.equal(r.body.error.code, 'rate_limited');
    // Both servers refused some: each saw the other's requests in the count.
    assert.ok(burst.some((r, i) => i % 2 === 0 && r.status === 429));
    assert.ok(burst.some((r, i) => i % 2 === 1 && r.status === 429));
  });

  test('a bank deleted through one server is gone for the other', async () => {
    const bank = 'doomed@example.com';
    const r = await call(a.url, 'POST', bankPath(bank, '/memories'), {
      body: { items: [{ content: 'soon gone', fact_type: 'world' }], document_id: 'doc' },
    });
    assert.equal(r.status, 200);
    assert.equal((await call(b.url, 'GET', bankPath(bank))).status, 200);
    const del = await call(b.url, 'DELETE', bankPath(bank));
    assert.equal(del.status, 200);
    for (const server of [a, b]) {
      assert.equal((await call(server.url, 'GET', bankPath(bank))).status, 404);
      assert.equal((await call(server.url, 'GET', bankPath(bank, '/memories'))).status, 404);
      assert.equal((await call(server.url, 'GET', bankPath(bank, '/documents/doc'))).status, 404);
    }
    const rows = await sql.query('SELECT count(*)::int AS n FROM memories WHERE bank_id = $1', [bank]);
    assert.equal(rows.rows[0].n, 0);
  });

  test('a key revoked through one server is refused by the other at once', async () => {
    const k = await call(a.url, 'POST', '/v1/default/projects/default/keys', {
      body: { name: 'short-lived', scopes: ['recall'] },
    });
    assert.equal(k.status, 201);
    assert.equal((await call(b.url, 'GET', '/v1/me/banks', { token: k.body.key })).status, 200);
    assert.equal((await call(a.url, 'DELETE', `/v1/default/projects/default/keys/${k.body.id}`)).status, 200);
    const refused = await call(b.url, 'GET', '/v1/me/banks', { token: k.body.key });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'unauthenticated');
  });
});
