import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewMemory } from '../../src/core/types.js';
import { migrate } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { DRIVER_POSTINGS } from '../../src/store/sql/search.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINES, openTestStore } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';

const P = 'default';

function vec(...xs: number[]): Float32Array {
  const v = new Float32Array(8);
  xs.forEach((x, i) => {
    v[i] = x;
  });
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function mem(text: string, over: Partial<NewMemory> = {}): NewMemory {
  const terms = new Map<string, number>();
  for (const t of text.toLowerCase().split(/\W+/).filter(Boolean)) terms.set(t, (terms.get(t) ?? 0) + 1);
  return newMemory({
    text,
    embedding: vec(1),
    terms,
    mentioned_at: new Date('2024-01-01T00:00:00Z'),
    ...over,
  });
}

for (const engine of ENGINES) {
  describe(`store (${engine})`, () => {
    let s: Store & { dispose(): Promise<void> };
    before(async () => {
      s = await openTestStore(engine);
    });
    after(() => s.dispose());

    /**
     * One bank past the driver budget for the keyword-search tests, filled once per engine and
     * then only read: 'apple' and 'river' are each in more memories than the budget, three
     * memories hold both, and 'zephyr' (30 memories) fits it.
     */
    let common: Promise<NewMemory[]> | undefined;
    function commonBank(): Promise<NewMemory[]> {
      common ??= (async () => {
        await s.ensureBank(P, 'common', {});
        const n = DRIVER_POSTINGS + 50;
        const filler = (i: number) => `entry${i} filler`;
        const rows = [
          ...Array.from({ length: n }, (_, i) => mem(`apple ${filler(i)}`)),
          ...Array.from({ length: n }, (_, i) => mem(`river ${filler(i)}`)),
          mem('apple river'),
          mem('apple river by the apple orchard', { tags: ['farm'] }),
          // Strong in the second word, weak in the first: reading only the rarest word's postings
          // (phase 1 before migration 12) ranked it among thousands of 'apple' memories and lost it.
          mem('river river river apple'),
          ...Array.from({ length: 30 }, (_, i) =>
            mem(`zephyr ${'apple '.repeat(i % 4)}${'pad '.repeat(i % 7)}note${i}`.trim()),
          ),
        ];
        // Eight-dimensional vectors are in none of the shared HNSW indexes (one per model size):
        // setting them aside while filling would save nothing.
        for (let i = 0; i < rows.length; i += 1000)
          await s.insertMemories(P, 'common', rows.slice(i, i + 1000));
        return rows;
      })();
      return common;
    }

    test('projects, keys and settings', async () => {
      assert.equal((await s.getProject('default'))?.name, 'Default project');
      const p = await s.createProject({ id: 'acme', name: 'Acme', limits: { stored_memories: 10 } });
      assert.equal(p?.id, 'acme');
      assert.equal(await s.createProject({ id: 'acme', name: 'again' }), null);
      assert.deepEqual((await s.updateProjectLimits('acme', { requests_per_minute: 5 }))?.limits, {
        stored_memories: 10,
        requests_per_minute: 5,
      });
      const k = await s.createApiKey({
        id: 'k1',
        projectId: 'acme',
        name: 'n',
        scopes: ['recall'],
        secretHash: 'h',
        expiresAt: null,
      });
      assert.deepEqual(k.scopes, ['recall']);
      assert.equal((await s.getApiKey('k1'))?.secret_hash, 'h');
      assert.equal((await s.listApiKeys('acme')).length, 1);
      assert.equal(await s.revokeApiKey('acme', 'k1'), true);
      assert.ok((await s.getApiKey('k1'))?.revoked_at);
      assert.equal(await s.revokeApiKey('other', 'k1'), false);
      const a = await s.setting('pepper', () => 'first');
      assert.equal(await s.setting('pepper', () => 'second'), a);
      assert.equal(await s.deleteProject('acme'), true);
      assert.equal(await s.getApiKey('k1'), null);
    });

    test('spaces and banks', async () => {
      assert.ok(await s.createSpace(P, { id: 'sp', name: 'Space' }));
      assert.equal(await s.createSpace(P, { id: 'sp', name: 'again' }), null);
      const b = await s.ensureBank(P, 'b1', { spaceId: 'sp' });
      assert.equal(b.space_id, 'sp');
      assert.equal(
        (await s.ensureBank(P, 'b1', { spaceId: null })).space_id,
        'sp',
        'ensure keeps an existing bank',
      );
      assert.equal((await s.getSpace(P, 'sp'))?.bank_count, 1);
      assert.deepEqual(
        (await s.listBanks(P, { spaceId: 'sp' })).map((x) => x.id),
        ['b1'],
      );
      const u = await s.updateBank(P, 'b1', { name: 'B', mission: 'help' });
      assert.equal(u?.mission, 'help');
      const c1 = await s.updateBankConfig(P, 'b1', { disposition_empathy: 5, enable_reranking: false });
      assert.deepEqual(c1?.before, {});
      assert.deepEqual(c1?.bank.config, { disposition_empathy: 5, enable_reranking: false });
      const c2 = await s.updateBankConfig(P, 'b1', { enable_reranking: null, recall_default_budget: 'low' });
      assert.deepEqual(c2?.before, { disposition_empathy: 5, enable_reranking: false });
      assert.deepEqual(c2?.bank.config, { disposition_empathy: 5, recall_default_budget: 'low' });
      assert.equal(await s.updateBankConfig(P, 'no-such-bank', { disposition_empathy: 1 }), null);
      assert.equal(await s.deleteSpace(P, 'sp'), 1);
      assert.equal((await s.getBank(P, 'b1'))?.space_id, null);
      assert.equal(await s.deleteSpace(P, 'sp'), null);
    });

    test('memories: insert, list, filter, search, delete keep statistics exact', async () => {
      await s.ensureBank(P, 'm', {});
      const a = mem('alpha bravo charlie', {
        tags: ['x'],
        embedding: vec(1, 0),
        entities: [{ text: 'Alpha', type: 'PERSON' }],
      });
      const b = mem('bravo delta', { type: 'preference', embedding: vec(0, 1), document_id: 'doc' });
      const c = mem('echo foxtrot', {
        embedding: vec(1, 1),
        occurred_start: new Date('2023-05-01'),
        occurred_end: new Date('2023-05-02'),
      });
      await s.insertMemories(P, 'm', [a, b, c]);
      const bank = await s.getBank(P, 'm');
      assert.equal(bank?.memory_count, 3);
      assert.equal(bank?.term_total, 7);
      assert.deepEqual(await s.bankCounts(P, 'm'), { memory_count: 3, entity_count: 1, document_count: 1 });

      const list = await s.listMemories(P, 'm', {}, { limit: 2 });
      assert.deepEqual(
        list.items.map((m) => m.text),
        ['echo foxtrot', 'bravo delta'],
      );
      const rest = await s.listMemories(P, 'm', {}, { limit: 2, cursor: list.next_cursor! });
      assert.deepEqual(
        rest.items.map((m) => m.text),
        ['alpha bravo charlie'],
      );
      assert.deepEqual(rest.items[0]!.entities, ['Alpha']);
      assert.equal((await s.listMemories(P, 'm', { types: ['preference'] }, { limit: 10 })).items.length, 1);
      assert.equal((await s.listMemories(P, 'm', { documentId: 'doc' }, { limit: 10 })).items.length, 1);
      assert.equal((await s.listMemories(P, 'm', { q: 'FOX' }, { limit: 10 })).items.length, 1);

      const kw = await s.keywordSearch(P, 'm', ['bravo', 'charlie'], {}, 10);
      assert.equal(kw[0]!.id, a.id, 'both terms beat one');
      assert.equal(kw.length, 2);
      // Scores are normalised per query, so idf shows within one query: 'echo' (one memory)
      // outweighs 'bravo' (two memories) for memories of equal length.
      const mixed = await s.keywordSearch(P, 'm', ['bravo', 'echo'], {}, 10);
      const score = (id: string) => mixed.find((h) => h.id === id)!.score;
      assert.ok(score(c.id) > score(b.id), 'idf: rare terms weigh more');
      const sem = await s.semanticSearch(P, 'm', vec(0, 1), {}, 10);
      assert.equal(sem[0]!.id, b.id);
      assert.ok(Math.abs(sem[0]!.score - 1) < 1e-5);
      const cands = await s.getCandidates(P, 'm', [a.id, c.id], vec(1, 0));
      assert.deepEqual(cands.map((m) => m.id).sort(), [a.id, c.id].sort());
      assert.ok(Math.abs(cands.find((m) => m.id === a.id)!.similarity! - 1) < 1e-5);
      assert.equal(cands.find((m) => m.id === a.id)!.text, a.text);
      const otherSize = await s.getCandidates(P, 'm', [a.id], new Float32Array([1, 0, 0]));
      assert.equal(otherSize[0]!.similarity, null, 'a vector of another size has no similarity');
      const tm = await s.temporalSearch(
        P,
        'm',
        { start: new Date('2023-05-01'), end: new Date('2023-06-01') },
        {},
        10,
      );
      assert.deepEqual(
        tm.map((h) => h.id),
        [c.id],
      );
      assert.equal((await s.getMemories(P, 'm', [a.id, b.id])).length, 2);

      assert.equal(await s.deleteMemory(P, 'm', a.id), true);
      assert.equal(await s.deleteMemory(P, 'm', a.id), false);
      const after1 = await s.getBank(P, 'm');
      assert.equal(after1?.memory_count, 2);
      assert.equal(after1?.term_total, 4);
      assert.deepEqual(await s.keywordSearch(P, 'm', ['charlie'], {}, 10), []);
      assert.equal(
        (await s.listEntities(P, 'm', { limit: 10 })).items.length,
        0,
        'unmentioned entities are hidden',
      );
    });

    test('document replace is atomic with the insert', async () => {
      await s.ensureBank(P, 'd', {});
      await s.insertMemories(P, 'd', [
        mem('v1 a', { document_id: 'doc' }),
        mem('v1 b', { document_id: 'doc' }),
      ]);
      await s.insertMemories(P, 'd', [mem('v2', { document_id: 'doc' })], { replaceDocuments: ['doc'] });
      const items = (await s.listMemories(P, 'd', {}, { limit: 10 })).items;
      assert.deepEqual(
        items.map((m) => m.text),
        ['v2'],
      );
      assert.equal((await s.getBank(P, 'd'))?.memory_count, 1);
    });

    test('concurrent writers to one bank lose nothing', async () => {
      await s.ensureBank(P, 'c', {});
      const writers = Array.from({ length: 8 }, (_, w) =>
        s.insertMemories(
          P,
          'c',
          Array.from({ length: 25 }, (_, i) => mem(`writer ${w} item ${i} shared`)),
        ),
      );
      await Promise.all(writers);
      assert.equal((await s.bankCounts(P, 'c')).memory_count, 200);
      assert.equal((await s.getBank(P, 'c'))?.memory_count, 200);
      const shared = await s.keywordSearch(P, 'c', ['shared'], {}, 500);
      assert.equal(shared.length, 200);
    });

    test('a query of only common words reads the best postings of each and still ranks exactly', async () => {
      // Every query word is in more memories than the driver budget: phase 1 takes each word's
      // highest-impact postings instead of all of the rarest word's.
      await commonBank();
      const hits = await s.keywordSearch(P, 'common', ['apple', 'river'], {}, 5);
      const texts = await s.getMemories(
        P,
        'common',
        hits.map((h) => h.id),
      );
      const text = (id: string) => texts.find((m) => m.id === id)?.text;
      // The three memories holding both words come first; scores are exact BM25 (ties cap at 1).
      assert.deepEqual(
        hits
          .slice(0, 3)
          .map((h) => text(h.id))
          .sort(),
        ['apple river', 'apple river by the apple orchard', 'river river river apple'],
      );
      assert.ok(hits[1]!.score >= hits[2]!.score && hits[2]!.score > hits[3]!.score);
      // Filters apply while reading the postings, so a filtered query still finds its memory.
      const farm = await s.keywordSearch(
        P,
        'common',
        ['apple', 'river'],
        { tags: ['farm'], tagsMatch: 'any_strict' },
        5,
      );
      assert.deepEqual(
        farm.map((h) => text(h.id)),
        ['apple river by the apple orchard'],
      );
    });

    test('a rare word with a common one: the common word adds its exact BM25 part to each candidate', async () => {
      // 'zephyr' fits the driver budget and is read in full; 'apple' does not and is looked up
      // for the candidates only. Scores must equal BM25 computed here from the texts.
      const rows = await commonBank();
      const bank = (await s.getBank(P, 'common'))!;
      const n = bank.memory_count;
      const avgdl = Math.max(bank.term_total / n, 1);
      const idfs = new Map(
        ['zephyr', 'apple'].map((t) => {
          const df = rows.filter((r) => r.terms.has(t)).length;
          return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
        }),
      );
      const idf = (t: string) => idfs.get(t)!;
      const bm25 = (r: NewMemory) => {
        const dl = [...r.terms.values()].reduce((a, b) => a + b, 0);
        let sum = 0;
        for (const t of ['zephyr', 'apple']) {
          const tf = r.terms.get(t) ?? 0;
          if (tf) sum += (idf(t) * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * dl) / avgdl));
        }
        return sum;
      };
      // Ordered by BM25, then by id, descending; the score is BM25 over the query's IDF mass, at most 1.
      const expected = rows
        .map((r) => ({ id: r.id, bm25: bm25(r) }))
        .map((e) => ({ ...e, score: Math.min(1, e.bm25 / (idf('zephyr') + idf('apple'))) }))
        .sort((a, b) => b.bm25 - a.bm25 || (b.id < a.id ? -1 : 1))
        .slice(0, 10);
      const hits = await s.keywordSearch(P, 'common', ['zephyr', 'apple'], {}, 10);
      assert.deepEqual(
        hits.map((h) => h.id),
        expected.map((e) => e.id),
      );
      for (const [i, h] of hits.entries())
        assert.ok(Math.abs(h.score - expected[i]!.score) < 1e-9, `score ${i}`);
    });

    test('audit is append-only and paged; entities page', async () => {
      for (let i = 0; i < 3; i++) {
        await s.appendAudit({
          projectId: P,
          actorType: 'operator',
          keyId: null,
          action: `a${i}`,
          bankId: 'z',
          spaceId: null,
          status: 200,
          requestId: `r${i}`,
        });
      }
      const p1 = await s.listAudit(P, { bankId: 'z' }, { limit: 2 });
      assert.deepEqual(
        p1.items.map((e) => e.action),
        ['a2', 'a1'],
      );
      const p2 = await s.listAudit(P, { bankId: 'z' }, { limit: 2, cursor: p1.next_cursor! });
      assert.deepEqual(
        p2.items.map((e) => e.action),
        ['a0'],
      );
      assert.equal(p2.next_cursor, null);
      assert.deepEqual(
        (await s.listAudit(P, { action: 'a1' }, { limit: 5 })).items.map((e) => e.request_id),
        ['r1'],
      );
    });

    test('delete bank removes its data and reports the count', async () => {
      await s.ensureBank(P, 'gone', {});
      await s.insertMemories(P, 'gone', [mem('one', { entities: [{ text: 'E', type: 'X' }] }), mem('two')]);
      assert.equal(await s.deleteBank(P, 'gone'), 2);
      assert.equal(await s.getBank(P, 'gone'), null);
      assert.equal(await s.deleteBank(P, 'gone'), null);
    });
  });
}

// Migrating an empty PGlite, and re-running: test/store/schema-version.slow.test.ts. This suite is
// registered only where PostgreSQL is tested (ENGINES), never skipped.
if (ENGINES.includes('postgres'))
  describe('migrations', () => {
    test('several processes migrating one PostgreSQL at once migrate it exactly once', async () => {
      const tdb = await createTestDatabase();
      const dbs = await Promise.all(Array.from({ length: 4 }, () => openPostgres(tdb.url!, { poolSize: 2 })));
      const applied = await Promise.all(dbs.map((db) => migrate(db)));
      assert.equal(applied.filter((a) => a.length > 0).length, 1);
      const rows = await dbs[0]!.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      assert.equal(rows[0]!.n, MIGRATIONS.length);
      await Promise.all(dbs.map((db) => db.close()));
      await tdb.drop();
    });
  });
