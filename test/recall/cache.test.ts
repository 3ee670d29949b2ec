/**
 * The Recall answer cache serves a repeated query only while nothing that could change its answer
 * has been written: every kind of write to the bank (Retain, delete, document replace, config,
 * re-embedding, consolidation), a write through another process on the same database, and the
 * time to live all make the next Recall compute afresh. Banks with managed encryption are never
 * cached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RecallCache } from '../../src/core/recall/cache.js';
import { openStore } from '../../src/store/open.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { createTestDatabase, ENGINES, openTestStore } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { termFrequencies } from '../../src/text/terms.js';
import { encryptedApp, newMasterKey } from '../security/encryption-helpers.js';

describe('RecallCache', () => {
  test('expires entries after the time to live and drops the least recently used when full', () => {
    const c = new RecallCache<string>(2, 1000);
    c.set('a', 'A', 0);
    c.set('b', 'B', 0);
    assert.equal(c.get('a', 500), 'A'); // a is now the most recently used
    c.set('c', 'C', 600);
    assert.equal(c.get('b', 600), undefined, 'b was the least recently used');
    assert.equal(c.get('a', 900), 'A');
    assert.equal(c.get('c', 1500), 'C');
    assert.equal(c.get('a', 1001), undefined, 'a outlived its time to live');
    assert.equal(c.size, 1);
  });

  test('a size of 0 keeps nothing', () => {
    const c = new RecallCache<string>(0, 1000);
    c.set('a', 'A', 0);
    assert.equal(c.get('a', 0), undefined);
  });
});

for (const engine of ENGINES) {
  describe(`recall answer cache (${engine})`, () => {
    let t: TestApp;
    let clock = Date.parse('2025-03-01T12:00:00Z');
    const bank = 'cache@example.com';
    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          items: [
            { content: 'Ada keeps bees on the roof of her flat', timestamp: '2025-02-01T10:00:00Z' },
            { content: 'Ada sold honey at the Saturday market', timestamp: '2025-02-08T10:00:00Z' },
          ],
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });
    after(() => t.close());

    const cache = () => t.services.recallCache!;
    const recall = async (query = 'Where does Ada keep her bees?', extra: Record<string, unknown> = {}) => {
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), { body: { query, ...extra } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results as { id: string; text: string; scores: Record<string, number> }[];
    };
    /** Recalls twice and says whether the second answer came from the cache. */
    const servedTwice = async () => {
      const before = cache().size;
      const first = await recall();
      const grew = cache().size > before;
      const second = await recall();
      assert.deepEqual(second, first);
      return grew;
    };
    const texts = (rs: { text: string }[]) => rs.map((r) => r.text);

    test('a repeated query is answered from the cache, a different one is not', async () => {
      const n = cache().size;
      const first = await recall();
      assert.equal(cache().size, n + 1);
      const again = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'Where does Ada keep her bees?' },
      });
      assert.equal(again.headers.get('content-type'), 'application/json');
      assert.deepEqual(again.body.results, first, 'the cached answer is the same JSON');
      assert.equal(cache().size, n + 1, 'the repeat added no entry');
      await recall('Where does Ada keep her bees?', { budget: 'high' });
      assert.equal(cache().size, n + 2, 'other options are another entry');
    });

    test('Retain, delete and document replace are seen by the next recall', async () => {
      await recall();
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'Ada moved the bees to an allotment by the river', document_id: 'd1' }] },
      });
      const afterRetain = await recall();
      assert.ok(
        texts(afterRetain).some((x) => x.includes('allotment')),
        'the new memory is recalled',
      );

      await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'Ada moved the bees to a meadow outside town', document_id: 'd1' }] },
      });
      const afterReplace = texts(await recall());
      assert.ok(afterReplace.some((x) => x.includes('meadow')));
      assert.ok(!afterReplace.some((x) => x.includes('allotment')), 'the replaced document is gone');

      const meadow = (await recall()).find((r) => r.text.includes('meadow'))!;
      const d = await t.call('DELETE', bankPath(bank, `/memories/${meadow.id}`));
      assert.ok(d.status === 200 || d.status === 204, JSON.stringify(d.body));
      assert.ok(!texts(await recall()).some((x) => x.includes('meadow')), 'the deleted memory is gone');
    });

    test('a config change is seen by the next recall', async () => {
      const on = await recall();
      assert.ok(on.some((r) => r.scores.keyword! > 0));
      const p = await t.call('PATCH', bankPath(bank, '/config'), {
        body: { updates: { enable_reranking: false } },
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      const off = await recall();
      assert.ok(
        off.every((r) => r.scores.reranker! === 0),
        'reranking is off in the next answer',
      );
      await t.call('PATCH', bankPath(bank, '/config'), { body: { updates: { enable_reranking: true } } });
      assert.ok((await recall()).some((r) => r.scores.reranker! > 0));
    });

    test('store writes that bypass Retain (embeddings, observations) move the generation on', async () => {
      const generation = async () => (await t.services.store.getBank('default', bank))!.generation;
      const g0 = await generation();
      const [m] = (await t.services.store.listMemories('default', bank, {}, { limit: 1 })).items;
      const [v] = await t.services.embedder.embed(['bees']);
      await t.services.store.setEmbeddings('default', bank, [{ id: m!.id, embedding: v! }]);
      const g1 = await generation();
      assert.ok(g1 > g0, 'setEmbeddings');
      await t.services.store.pruneObservations('default', bank);
      assert.ok((await generation()) > g1, 'pruneObservations');
    });

    test('the time to live bounds how long an answer is served', async () => {
      assert.equal(await servedTwice(), true);
      const n = cache().size;
      clock += 31_000;
      await recall();
      assert.equal(cache().size, n, 'the expired entry was computed again and stored in its place');
    });
  });
}

for (const engine of ENGINES) {
  test(`a bank with managed encryption is never cached (${engine})`, async () => {
    const store = await openTestStore(engine);
    const e = await encryptedApp(store, newMasterKey(), { worker: false });
    try {
      const path = bankPath('secret', '/memories');
      assert.equal(
        (await e.call('POST', path, { items: [{ content: 'Cy hides the key under a stone' }] })).status,
        200,
      );
      const plain = await e.call('POST', `${path}/recall`, { query: 'Where is the key?' });
      assert.equal(plain.body.results.length, 1);
      assert.equal(e.services.recallCache!.size, 1, 'a plain bank is cached');
      const patched = await e.call('PATCH', bankPath('secret', '/config'), {
        updates: { encryption: 'managed' },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      for (let i = 0; i < 2; i++) {
        const r = await e.call('POST', `${path}/recall`, { query: 'Where is the key?' });
        assert.equal(r.body.results[0].text, 'Cy hides the key under a stone');
      }
      assert.equal(e.services.recallCache!.size, 1, 'no entry was added for the encrypted bank');
    } finally {
      await e.close();
      await store.dispose();
    }
  });
}

if (process.env.MNEMO_TEST_DATABASE_URL) {
  describe('recall answer cache across processes (postgres)', () => {
    test('a Retain through another process on the same database is seen at once', async () => {
      const db = await createTestDatabase();
      const t = await testApp('postgres', { store: await openStore({ databaseUrl: db.url, poolSize: 2 }) });
      const other = await openStore({ databaseUrl: db.url, poolSize: 1 });
      try {
        await t.call('POST', bankPath('shared', '/memories'), {
          body: { items: [{ content: 'Bo plays the cello in a quartet' }] },
        });
        const ask = async () => {
          const r = await t.call('POST', bankPath('shared', '/memories/recall'), {
            body: { query: 'What does Bo play?' },
          });
          return (r.body.results as { text: string }[]).map((x) => x.text);
        };
        assert.deepEqual(await ask(), ['Bo plays the cello in a quartet']);
        assert.deepEqual(await ask(), ['Bo plays the cello in a quartet']);
        const [v] = await t.services.embedder.embed(['Bo plays the oboe too']);
        const text = 'Bo plays the oboe too';
        await other.insertMemories('default', 'shared', [
          newMemory({ text, embedding: v!, terms: termFrequencies(text) }),
        ]);
        assert.ok((await ask()).includes('Bo plays the oboe too'), 'the other process wrote a second memory');
      } finally {
        await other.close();
        await t.close();
        await db.drop();
      }
    });
  });
}
