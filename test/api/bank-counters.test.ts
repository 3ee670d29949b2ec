/**
 * The bank's counters (`banks.valid_count`, `entity_count`, `document_count`, migration 46) equal
 * what the rows say after every kind of write: Retain (with documents and entities, and replacing
 * a document), curation (invalidate, restore), deleting a memory or a document, clearing a fact
 * type, consolidation, re-encryption, deleting a bank; and after writers running at once
 * (parallel requests on one instance; on PostgreSQL, two store instances over one database). The
 * bank profile and the memory listing's totals read them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { runReencryptOperation } from '../../src/core/crypto/reencrypt.js';
import { runAllSlices } from '../../src/core/operations.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { openPostgres } from '../../src/store/postgres.js';
import { newMasterKey } from '../security/encryption-helpers.js';
import { integrityProblems } from '../stress/integrity.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

type Item = { content: string; document_id?: string; fact_type?: string; entities?: { text: string }[] };

/** Retains `items` in `bank` through `t`; the new memories' ids. */
async function retain(t: TestApp, bank: string, items: Item[]): Promise<string[]> {
  const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.memory_ids as string[];
}

const items = (tag: string, n: number, doc?: (i: number) => string | undefined): Item[] =>
  Array.from({ length: n }, (_, i) => ({
    content: `${tag} fact ${i}: Marta${i % 3} visited Lyon${i % 2} on day ${i}.`,
    fact_type: i % 2 ? 'world' : 'experience',
    entities: [{ text: `Marta${i % 3}` }, { text: `Lyon${i % 2}` }],
    ...(doc?.(i) ? { document_id: doc(i) } : {}),
  }));

/**
 * Writers at once on one bank, spread over `apps`: Retains of memories of shared documents,
 * invalidations and deletions of seeded memories, and one document deleted.
 */
async function crowd(apps: TestApp[], bank: string) {
  const app = (k: number) => apps[k % apps.length]!;
  const seeded = await retain(
    app(0),
    bank,
    items('seed', 12, (i) => `s${i % 5}`),
  );
  const answers = await Promise.all([
    ...Array.from({ length: 6 }, (_, k) =>
      retain(
        app(k),
        bank,
        items(`x${k}`, 4, (i) => `s${(i + k) % 7}`),
      ),
    ),
    ...seeded
      .slice(0, 4)
      .map((id, k) =>
        app(k + 1).call('PATCH', bankPath(bank, `/memories/${id}`), { body: { state: 'invalidated' } }),
      ),
    ...seeded.slice(4, 8).map((id, k) => app(k).call('DELETE', bankPath(bank, `/memories/${id}`))),
    app(1).call('DELETE', bankPath(bank, '/documents/s4')),
  ]);
  // A memory of the deleted document may be gone before its own request: 404.
  for (const r of answers)
    if (!Array.isArray(r)) assert.ok([200, 404].includes(r.status), JSON.stringify(r.body));
}

for (const engine of ENGINES) {
  describe(`bank counters equal the rows after every kind of write (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      t = await testApp(engine, {
        masterKey: newMasterKey(),
        store: Object.assign(storeOver(db), { dispose: opened.dispose }),
      });
    });
    after(() => t?.close());

    const consistent = async (what: string) => assert.deepEqual(await integrityProblems(db), [], what);
    const count = async (sql: string, bank: string) =>
      (await db.query<{ n: number }>(sql, ['default', bank]))[0]!.n;

    /** The profile's counts and the listing's totals, against count(*). */
    async function reads(bank: string) {
      const profile = (await t.call('GET', bankPath(bank))).body;
      assert.equal(
        profile.memory_count,
        await count('SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND bank_id = $2', bank),
      );
      assert.equal(
        profile.entity_count,
        await count('SELECT count(*)::int AS n FROM entities WHERE project_id = $1 AND bank_id = $2', bank),
      );
      assert.equal(
        profile.document_count,
        await count(
          'SELECT count(DISTINCT document_id)::int AS n FROM memories WHERE project_id = $1 AND bank_id = $2',
          bank,
        ),
      );
      for (const state of ['valid', 'invalidated', 'all']) {
        const r = await t.call(
          'GET',
          bankPath(bank, `/memories/list?limit=1${state === 'valid' ? '' : `&state=${state}`}`),
        );
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const cond = state === 'all' ? '' : ` AND state = '${state}'`;
        assert.equal(
          r.body.total,
          await count(
            `SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND bank_id = $2${cond}`,
            bank,
          ),
          `total of state=${state}`,
        );
      }
    }

    test('retain, curation, deletions, clearing, consolidation, re-encryption, bank deletion', async () => {
      const bank = 'counted';
      const ids = await retain(
        t,
        bank,
        items('a', 12, (i) => (i < 8 ? `d${i % 3}` : undefined)),
      );
      await consistent('retain');
      await reads(bank);

      const patch = (id: string, body: unknown) =>
        t.call('PATCH', bankPath(bank, `/memories/${id}`), { body });
      assert.equal((await patch(ids[0]!, { state: 'invalidated', reason: 'wrong' })).status, 200);
      assert.equal((await patch(ids[1]!, { state: 'invalidated', reason: 'wrong' })).status, 200);
      await consistent('invalidated');
      await reads(bank);
      assert.equal((await patch(ids[1]!, { state: 'valid' })).status, 200);
      await consistent('restored');

      assert.equal((await t.call('DELETE', bankPath(bank, `/memories/${ids[11]}`))).status, 200);
      await consistent('a memory deleted');
      assert.equal((await t.call('DELETE', bankPath(bank, '/documents/d1'))).status, 200);
      await consistent('a document deleted');
      await reads(bank);

      // The same document retained again: its memories replaced.
      await retain(t, bank, [{ content: 'Marta moved to Paris.', document_id: 'd2' }]);
      await consistent('a document replaced');
      await consolidateBank(t.services, 'default', bank);
      await consistent('consolidated');
      assert.equal((await t.call('DELETE', bankPath(bank, '/memories?type=world'))).status, 200);
      await consistent('a fact type cleared');
      await reads(bank);

      const switched = await t.call('PATCH', bankPath(bank, '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(switched.status, 200, JSON.stringify(switched.body));
      await runAllSlices(t.services, runReencryptOperation, {
        id: 'manual',
        projectId: 'default',
        bankId: bank,
        kind: 'reencrypt',
        payload: {},
        signal: new AbortController().signal,
      });
      await retain(
        t,
        bank,
        items('b', 3, () => 'd9'),
      );
      await consistent('re-encrypted');
      await reads(bank);

      assert.equal((await t.call('DELETE', bankPath(bank))).status, 200);
      await consistent('bank deleted');
    });

    test('parallel requests on one bank', async () => {
      await crowd([t], 'crowd');
      await consistent('parallel writers');
      await reads('crowd');
    });
  });
}

describe('bank counters with two store instances writing one bank on PostgreSQL', {
  skip: ENGINES.includes('postgres') ? false : 'MNEMO_TEST_DATABASE_URL is not set',
}, () => {
  let a: TestApp;
  let b: TestApp;
  let db: Db;
  before(async () => {
    const opened = (await openTestDb('postgres')) as Awaited<ReturnType<typeof openTestDb>> & { url: string };
    db = opened.db;
    a = await testApp('postgres', { store: Object.assign(storeOver(db), { dispose: opened.dispose }) });
    const other = await openPostgres(opened.url, { poolSize: 4 });
    b = await testApp('postgres', {
      store: Object.assign(storeOver(other), { dispose: () => other.close() }),
    });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('retains, curations and deletions through both at once keep the counters exact', async () => {
    const bank = 'shared';
    await crowd([a, b], bank);
    assert.deepEqual(await integrityProblems(db), []);
    const profile = (await b.call('GET', bankPath(bank))).body;
    const [row] = await db.query<{ n: number; e: number; d: number }>(
      `SELECT count(*)::int AS n, (SELECT count(*)::int FROM entities WHERE bank_id = $1) AS e,
         count(DISTINCT document_id)::int AS d FROM memories WHERE bank_id = $1`,
      [bank],
    );
    assert.deepEqual(
      [profile.memory_count, profile.entity_count, profile.document_count],
      [row!.n, row!.e, row!.d],
    );
  });
});
