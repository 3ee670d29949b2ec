/**
 * The stored-memories quota under concurrency, written as the attack: many Retains at once
 * near the quota (through one app, and on PostgreSQL through two app instances, i.e. two
 * processes' connection pools) must never leave more memories stored than the quota allows.
 * Before: each Retain checked the count before its work and inserted after it, so all of them
 * passed the check together (20 concurrent single-item Retains at 0 of 10 stored 20).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../src/store/open.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { createTestDatabase, ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

/** Creates project `p` with a key and a stored-memories quota; returns the key. */
async function project(t: TestApp, p: string, quota: number): Promise<string> {
  assert.equal((await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } })).status, 201);
  const key = await t.call('POST', `/v1/default/projects/${p}/keys`, {
    body: { name: 'k', scopes: ['retain', 'recall', 'admin'] },
  });
  const patched = await t.call('PATCH', `/v1/default/projects/${p}`, {
    body: { limits: { stored_memories: quota } },
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  return key.body.key;
}

/** Fires `n` Retains of `items` one-line items each, all at once, across `apps` and `banks` banks. */
async function storm(apps: TestApp[], key: string, n: number, items: number, banks: number) {
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      apps[i % apps.length]!.call('POST', me(`b${i % banks}`, '/memories'), {
        token: key,
        body: { items: Array.from({ length: items }, (_, k) => ({ content: `fact ${i}.${k} about bees` })) },
      }),
    ),
  );
  const odd = results.find((r) => r.status !== 200 && r.status !== 429);
  assert.equal(odd, undefined, JSON.stringify(odd?.body));
  for (const r of results.filter((x) => x.status === 429))
    assert.equal(r.body.error.limit, 'stored_memories');
  return results.filter((r) => r.status === 200).length;
}

async function stored(t: TestApp, p: string): Promise<number> {
  return (await t.call('GET', `/v1/default/projects/${p}`)).body.usage.stored_memories;
}

for (const engine of ENGINES) {
  describe(`stored-memories quota under concurrency (${engine})`, () => {
    test('20 concurrent Retains at 0 of 10 (one bank, and five banks): exactly 10 stored', async () => {
      const t = await testApp(engine);
      try {
        for (const [p, banks] of [
          ['one', 1],
          ['five', 5],
        ] as const) {
          const key = await project(t, p, 10);
          const accepted = await storm([t], key, 20, 1, banks);
          assert.equal(await stored(t, p), accepted);
          assert.equal(accepted, 10, `${p}: ${accepted} Retains accepted, quota 10`);
        }
      } finally {
        await t.close();
      }
    });

    test('batches near the quota: never over it, and a refused batch stores none of its items', async () => {
      const t = await testApp(engine);
      try {
        const key = await project(t, 'batches', 25);
        const accepted = await storm([t], key, 12, 3, 3);
        const n = await stored(t, 'batches');
        assert.ok(n <= 25, `${n} stored, quota 25`);
        assert.equal(n, 3 * accepted, 'all of an accepted batch, nothing of a refused one');
        assert.equal(accepted, 8);
        // 24 of 25 stored: one delete makes room for two more, and no third
        const list = await t.call('GET', me('b0', '/memories'), { token: key });
        const gone = await t.call('DELETE', me('b0', `/memories/${list.body.items[0].id}`), { token: key });
        assert.equal(gone.status, 200);
        assert.equal(await storm([t], key, 3, 1, 1), 2);
        assert.equal(await stored(t, 'batches'), 25);
      } finally {
        await t.close();
      }
    });

    test('queued Retains are held to the quota when they run: the ones past it fail, nothing over', async () => {
      const t = await testApp(engine, { runWorker: true });
      try {
        const key = await project(t, 'queued', 3);
        // All six are admitted when queued (none is stored yet); their runs meet the quota.
        const queued = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            t.call('POST', me(`q${i % 2}`, '/memories'), {
              token: key,
              body: { items: [{ content: `queued fact ${i}` }], async: true },
            }),
          ),
        );
        const ops = queued.map((r) => {
          assert.equal(r.status, 200, JSON.stringify(r.body));
          return me(r.body.bank_id, `/operations/${r.body.operation_id}`);
        });
        const done = await Promise.all(
          ops.map((path) =>
            until(
              () => t.call('GET', path, { token: key }),
              (r) => r.body.status === 'completed' || r.body.status === 'failed',
            ),
          ),
        );
        const failed = done.filter((r) => r.body.status === 'failed');
        assert.equal(failed.length, 3, JSON.stringify(done.map((r) => r.body.status)));
        for (const f of failed) assert.match(f.body.error, /stored memories/);
        assert.equal(await stored(t, 'queued'), 3);
      } finally {
        await t.close();
      }
    });

    test('consolidation stops at the quota instead of passing it, says why, and resumes losing nothing', async () => {
      const t = await testApp(engine, { runWorker: true });
      try {
        // Five unrelated facts, each said twice: consolidation makes one observation per fact.
        const facts = [
          'Carol drinks green tea every morning.',
          'Alice adopted a beagle named Pepper.',
          'Bob repairs vintage motorcycles in his garage.',
          'Dana teaches chemistry at Lincoln High School.',
          'Evan sails a small boat on Lake Geneva each summer.',
        ];
        const key = await project(t, 'obs', 12);
        const r = await t.call('POST', me('b', '/memories'), {
          token: key,
          body: { items: facts.flatMap((content) => [{ content }, { content }]) },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const consolidations = async () =>
          (await t.call('GET', me('b', '/operations?type=consolidate'), { token: key })).body.items as {
            id: string;
            status: string;
            error: string | null;
            memories_created: number;
          }[];
        const ended = (ops: { status: string }[]) =>
          ops.length > 0 && ops.every((o) => o.status === 'completed' || o.status === 'failed');
        const [stopped] = await until(consolidations, ended, 120_000);
        assert.equal(stopped!.status, 'failed', JSON.stringify(stopped));
        assert.match(
          stopped!.error ?? '',
          /quota of 12 stored memories reached .*consolidation stopped before/,
        );
        assert.equal(stopped!.memories_created, 2, 'two observations fitted, counted');
        assert.equal(await stored(t, 'obs'), 12, 'observations filled the quota and went no further');
        // Consolidated observations (a habit retained is typed `observation` too, without a proof count).
        const observations = async () =>
          (
            (await t.call('GET', me('b', '/memories?type=observation'), { token: key })).body.items as {
              metadata: { proof_count?: number };
            }[]
          ).filter((m) => m.metadata.proof_count !== undefined);
        assert.equal((await observations()).length, 2);
        // Not looping: nothing more runs or is queued by itself.
        assert.equal((await consolidations()).length, 1);

        // With room again, the next run goes on from where it stopped: every fact gets its
        // observation with both of its memories behind it, as if there had been no quota.
        const raised = await t.call('PATCH', '/v1/default/projects/obs', {
          body: { limits: { stored_memories: null } },
        });
        assert.equal(raised.status, 200);
        assert.equal((await t.call('POST', me('b', '/consolidate'), { token: key })).status, 200);
        const all = await until(consolidations, (ops) => ops.length === 2 && ended(ops), 120_000);
        const resumed = all.find((o) => o.id !== stopped!.id)!;
        assert.equal(resumed.status, 'completed', JSON.stringify(resumed));
        assert.equal(resumed.memories_created, 3);
        const obs = await observations();
        assert.equal(obs.length, 5);
        assert.deepEqual(
          obs.map((o) => o.metadata.proof_count),
          [2, 2, 2, 2, 2],
        );
        assert.equal(await stored(t, 'obs'), 15);
      } finally {
        await t.close();
      }
    });
  });
}

describe('stored-memories quota: two app instances on one PostgreSQL', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  test('40 concurrent Retains through both instances at 0 of 15: exactly 15 stored', async () => {
    const db = await createTestDatabase();
    const open = () => openStore({ databaseUrl: db.url, poolSize: 8 });
    const a = await testApp('postgres', { store: await open() });
    const b = await testApp('postgres', { store: await open() });
    try {
      const key = await project(a, 'race', 15);
      const accepted = await storm([a, b], key, 40, 1, 4);
      assert.equal(await stored(b, 'race'), accepted);
      assert.equal(accepted, 15);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});
