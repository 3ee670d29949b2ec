/**
 * Encrypted banks keep only sealed vectors and search them in memory: the in-memory channel
 * gives what the SQL channel gives a plain bank (filters included); a second process (its own
 * cache, same database) sees every write, deletion and re-embed of the first; switching
 * encryption off and on converts the vectors; consolidation and documents work on sealed vectors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import type { MemoryFilter } from '../../src/core/types.js';
import type { Db } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { storeOver } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

const ITEMS = [
  { content: 'Alice moved to Lisbon for a job at a bakery', tags: ['home'] },
  { content: 'Bob repairs vintage motorcycles in his garage', tags: ['work'] },
  { content: 'The quarterly budget review is on Thursday', tags: ['work'] },
  { content: 'Carol is learning to play the cello', tags: [] },
  { content: 'Dave booked flights to Tokyo for the conference', tags: ['work', 'home'] },
  { content: 'Our cat refuses to eat the new dry food', tags: ['home'] },
  { content: 'The server migration finished without downtime', tags: ['work'] },
  { content: 'Erin runs a marathon training plan every spring', tags: [] },
  { content: 'Frank bakes sourdough bread on weekends', tags: ['home'] },
  { content: 'The contract with the supplier expires in March', tags: ['work'] },
].map((it, i) => ({ ...it, timestamp: new Date(Date.UTC(2024, 0, 1 + i)).toISOString() }));

const FILTERS: MemoryFilter[] = [
  {},
  { tags: ['work'] },
  { tags: ['work'], tagsMatch: 'all' },
  { tags: ['work'], tagsMatch: 'any_strict' },
  { tags: ['work', 'home'], tagsMatch: 'all_strict' },
  { tags: ['home'], tagsMatch: 'exact' },
  { mentionedBefore: new Date(Date.UTC(2024, 0, 5)) },
  { types: ['world'] },
];

for (const engine of ENGINES) {
  describe(`sealed vectors of encrypted banks (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    const key = newMasterKey();
    /** Two "processes": each its own services and vector cache, one database. */
    let a: EncryptedApp;
    let b: EncryptedApp;

    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      store = storeOver(db);
      a = await encryptedApp(store, key);
      b = await encryptedApp(store, key, { worker: false });
    });
    after(async () => {
      await a.close();
      await b.close();
      await dispose();
    });

    const makeBank = async (bank: string, encrypted: boolean) => {
      assert.equal((await a.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
      if (encrypted) {
        const r = await a.call('PATCH', `/v1/default/banks/${bank}/config`, {
          updates: { encryption: 'managed' },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
    };
    const retain = async (app: EncryptedApp, bank: string, items: unknown[]) => {
      const r = await app.call('POST', `/v1/default/banks/${bank}/memories`, { items });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.memory_ids as string[];
    };
    const vectorColumns = async (bank: string) =>
      (
        await db.query<{ plain: number; sealed: number }>(
          `SELECT count(embedding)::int AS plain, count(embedding_sealed)::int AS sealed FROM memories
           WHERE bank_id = $1`,
          [bank],
        )
      )[0]!;
    const embed = async (text: string) => (await a.services.embedder.embed([text]))[0]!;
    /** Semantic hits as texts with scores, through one app's store. */
    const semantic = async (app: EncryptedApp, bank: string, query: string, filter: MemoryFilter = {}) => {
      const hits = await app.services.store.semanticSearch('default', bank, await embed(query), filter, 20);
      const mems = await app.services.store.getMemories(
        'default',
        bank,
        hits.map((h) => h.id),
      );
      const text = new Map(mems.map((m) => [m.id, m.text]));
      return hits.map((h) => ({ text: text.get(h.id)!, score: h.score, id: h.id }));
    };

    test('the in-memory channel of an encrypted bank returns what SQL returns for a plain one', async () => {
      await makeBank('plain', false);
      await makeBank('vault', true);
      await retain(a, 'plain', ITEMS);
      await retain(a, 'vault', ITEMS);
      assert.deepEqual(await vectorColumns('plain'), { plain: ITEMS.length, sealed: 0 });
      assert.deepEqual(await vectorColumns('vault'), { plain: 0, sealed: ITEMS.length });
      for (const query of ['travel abroad for work', 'bread and baking', 'music lessons']) {
        for (const filter of FILTERS) {
          const want = await semantic(a, 'plain', query, filter);
          const got = await semantic(a, 'vault', query, filter);
          const what = `${query} ${JSON.stringify(filter)}`;
          assert.deepEqual(
            got.map((h) => h.text),
            want.map((h) => h.text),
            what,
          );
          for (const [i, h] of got.entries()) assert.ok(Math.abs(h.score - want[i]!.score) < 1e-5, what);
        }
      }
      // Recall's candidates carry the similarity of their sealed vectors too.
      const rec = await a.call('POST', '/v1/default/banks/vault/memories/recall', { query: 'cello lessons' });
      assert.equal(rec.body.results[0].text, 'Carol is learning to play the cello');
      assert.ok(rec.body.results[0].scores.semantic > 0.5, JSON.stringify(rec.body.results[0].scores));
    });

    test('a second process never serves vectors the first has replaced or deleted', async () => {
      const q = 'playing a string instrument';
      const before = await semantic(b, 'vault', q); // b's cache is now warm
      assert.equal(before[0]!.text, 'Carol is learning to play the cello');
      // a retains: b finds the new memory
      await retain(a, 'vault', [{ content: 'Gina practises the violin every evening' }]);
      const added = await semantic(b, 'vault', q);
      assert.ok(
        added.slice(0, 2).some((h) => h.text.startsWith('Gina')),
        JSON.stringify(added),
      );
      // a deletes: b no longer returns it
      const gina = added.find((h) => h.text.startsWith('Gina'))!;
      assert.equal((await a.call('DELETE', `/v1/default/banks/vault/memories/${gina.id}`)).status, 200);
      const deleted = await semantic(b, 'vault', q);
      assert.ok(!deleted.some((h) => h.id === gina.id), JSON.stringify(deleted));
      assert.equal(deleted.length, ITEMS.length);
      // a re-embeds one memory with the query's own vector: b ranks it first at similarity 1
      const budget = deleted.find((h) => h.text.includes('budget'))!;
      await a.services.store.setEmbeddings('default', 'vault', [
        { id: budget.id, embedding: await embed(q) },
      ]);
      assert.deepEqual(await vectorColumns('vault'), { plain: 0, sealed: ITEMS.length });
      const moved = await semantic(b, 'vault', q);
      assert.equal(moved[0]!.id, budget.id);
      assert.ok(moved[0]!.score > 0.999, String(moved[0]!.score));
      // documents: replacing a document's memories replaces their vectors
      await retain(a, 'vault', [{ content: 'The tuba sits in the attic', document_id: 'doc-1' }]);
      assert.ok((await semantic(b, 'vault', 'brass instrument')).some((h) => h.text.includes('tuba')));
      await retain(a, 'vault', [{ content: 'The harp sits in the attic', document_id: 'doc-1' }]);
      const replaced = await semantic(b, 'vault', 'brass instrument');
      assert.ok(!replaced.some((h) => h.text.includes('tuba')), JSON.stringify(replaced));
      assert.ok(replaced.some((h) => h.text.includes('harp')));
      assert.equal((await a.call('DELETE', '/v1/default/banks/vault/documents/doc-1')).status, 200);
      assert.ok(!(await semantic(b, 'vault', 'brass instrument')).some((h) => h.text.includes('harp')));
    });

    test('concurrent searches of a cold bank, inside and outside read snapshots, all finish', async () => {
      // A fresh process: its cache is cold, so every search below wants to load the bank at once.
      const c = await encryptedApp(store, key, { worker: false });
      try {
        const vector = await embed('music lessons');
        const runs = Array.from({ length: 6 }, (_, i) =>
          i % 2
            ? c
                .call('POST', '/v1/default/banks/vault/memories/recall', { query: 'music lessons' })
                .then((r) => {
                  assert.equal(r.status, 200, JSON.stringify(r.body));
                  return r.body.results.length as number;
                })
            : c.services.store.semanticSearch('default', 'vault', vector, {}, 5).then((h) => h.length),
        );
        const done = await Promise.race([
          Promise.all(runs),
          new Promise<null>((r) => setTimeout(() => r(null), 60_000).unref()),
        ]);
        assert.ok(done, 'searches did not finish: deadlock');
        assert.ok(done.every((n) => n > 0));
      } finally {
        await c.close();
      }
    });

    test('consolidation finds neighbours by sealed vectors; observations are sealed too', async () => {
      await makeBank('habits', true);
      // No consolidation queued by the Retain: a's worker would race the run below to it.
      const off = await a.call('PATCH', '/v1/default/banks/habits/config', {
        updates: { enable_observations: false },
      });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      await retain(a, 'habits', [
        { content: 'Carol drinks green tea every morning.' },
        { content: 'Carol drinks green tea every morning.' },
      ]);
      const result = await consolidateBank(a.services, 'default', 'habits');
      assert.equal(result.observations_created, 1, JSON.stringify(result));
      const obs = await a.call('GET', '/v1/default/banks/habits/memories?type=observation');
      const consolidated = obs.body.items.filter((m: any) => m.metadata.proof_count !== undefined);
      assert.equal(consolidated[0]?.metadata.proof_count, 2, JSON.stringify(obs.body));
      assert.deepEqual(await vectorColumns('habits'), { plain: 0, sealed: 3 });
    });

    test('a bank encrypted before vectors were sealed: the migration queues their conversion', async () => {
      await makeBank('legacy', true);
      const texts = ITEMS.slice(0, 4).map((it) => it.content);
      await retain(
        a,
        'legacy',
        texts.map((content) => ({ content })),
      );
      // Switching encryption on queued a conversion of the bank for a's worker: let it finish
      // first, or it seals the vectors made plain below while they are being made so.
      await until(
        () => a.services.store.bankEncryption('default', 'legacy'),
        (st) => st?.key?.converting === false,
        60_000,
      );
      // And its operation ended: the migration queues no conversion beside one still running (it
      // clears `converting` before its operation is marked done), and this one would then never come.
      await until(
        () =>
          db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM operations WHERE bank_id = 'legacy' AND kind = 'reencrypt' AND status IN ('pending', 'processing')",
          ),
        (r) => r[0]?.n === 0,
        60_000,
      );
      // As such a bank was: sealed text and hashed terms, plain vectors.
      const rows = await db.query<{ id: string; text: string }>(
        "SELECT id::text AS id, text FROM memories WHERE bank_id = 'legacy'",
      );
      const mems = await a.services.store.getMemories(
        'default',
        'legacy',
        rows.map((r) => r.id),
      );
      for (const m of mems) {
        await db.query(
          "UPDATE memories SET embedding = $2::vector, embedding_sealed = NULL WHERE bank_id = 'legacy' AND id = $1",
          [m.id, `[${Array.from(await embed(m.text)).join(',')}]`],
        );
      }
      assert.deepEqual(await vectorColumns('legacy'), { plain: 4, sealed: 0 });
      // The data part of the migration (its ALTERs ran already).
      const migration = MIGRATIONS.find((m) => m.name === 'encrypted banks: sealed vectors')!;
      await db.exec(migration.sql.replace(/^ALTER TABLE .*$/gm, ''));
      await until(
        () => a.services.store.bankEncryption('default', 'legacy'),
        (st) => st?.key?.converting === false,
        60_000,
      );
      assert.deepEqual(await vectorColumns('legacy'), { plain: 0, sealed: 4 });
      // Text, keyword terms and hashes were left as they were (not sealed or hashed twice).
      const listed = await a.call('GET', '/v1/default/banks/legacy/memories');
      assert.deepEqual(listed.body.items.map((m: any) => m.text).sort(), [...texts].sort());
      const rec = await a.call('POST', '/v1/default/banks/legacy/memories/recall', { query: 'motorcycles' });
      const hit = rec.body.results.find((m: any) => m.text.includes('motorcycles'));
      assert.ok(hit && hit.scores.keyword > 0 && hit.scores.semantic > 0.3, JSON.stringify(rec.body.results));
    });

    test('switching encryption off and on converts the vectors; search works in each form', async () => {
      const done = async () =>
        until(
          () => a.call('GET', '/v1/default/banks/vault/operations?status=pending'),
          (r) => r.body.items.length === 0,
          60_000,
        ).then(() =>
          until(
            () => a.services.store.bankEncryption('default', 'vault'),
            (st) => st?.key?.converting === false,
            60_000,
          ),
        );
      const q = 'travel abroad for work';
      const sealedHits = await semantic(b, 'vault', q);
      let r = await a.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'none' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await done();
      const n = sealedHits.length;
      assert.deepEqual(await vectorColumns('vault'), { plain: n, sealed: 0 });
      assert.deepEqual(
        (await semantic(b, 'vault', q)).map((h) => h.id),
        sealedHits.map((h) => h.id),
      );
      r = await a.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'managed' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await done();
      assert.deepEqual(await vectorColumns('vault'), { plain: 0, sealed: n });
      assert.deepEqual(
        (await semantic(b, 'vault', q)).map((h) => h.id),
        sealedHits.map((h) => h.id),
      );
    });
  });
}
