/**
 * A bank that is a small share of a big table gets an HNSW index of its own, queued by Retain
 * and built by a worker; recall through it finds what an exact scan finds; deleting the bank
 * drops it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { EXACT_SEARCH_LIMIT } from '../../src/core/recall/bank-index.js';
import type { NewMemory } from '../../src/core/types.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { bankIndexName } from '../../src/store/sql/bank-index.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { withVectorIndexesBuiltAfter } from '../helpers/bulk.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { until } from '../helpers/until.js';

/** A deterministic unit vector of 100 dimensions (the local embedder's size). */
function vector(seed: number): Float32Array {
  const v = new Float32Array(100);
  let x = seed * 2654435761;
  for (let i = 0; i < v.length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    v[i] = x / 2147483648 - 0.5;
  }
  const norm = Math.hypot(...v);
  return v.map((a) => a / norm);
}

const memory = (seed: number): NewMemory =>
  newMemory({
    text: `synthetic memory ${seed}`,
    content_hash: `h${seed}`,
    embedding: vector(seed),
    terms: new Map([[`t${seed}`, 1]]),
  });

async function fill(t: TestApp, bank: string, from: number, n: number) {
  await t.services.store.ensureBank('default', bank, {});
  // No observations: a Retain would otherwise queue a consolidation of all n memories ahead of
  // the index build (about a minute on the embedded engine), which is not what these tests prove.
  await t.services.store.updateBank('default', bank, { embedder: t.services.embedder.id });
  await t.services.store.updateBankConfig('default', bank, { enable_observations: false });
  for (let i = 0; i < n; i += 500) {
    const batch = Array.from({ length: Math.min(500, n - i) }, (_, k) => memory(from + i + k));
    await t.services.store.insertMemories('default', bank, batch, {});
  }
}

for (const engine of ENGINES) {
  describe(`a bank's own vector index (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    const store = () => t.services.store;
    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      t = await testApp(engine, { store: Object.assign(storeOver(db), { dispose: opened.dispose }) });
      // 'minor' is at the exact-search size (one Retain takes it past); 'major' holds most of
      // the table. The shared vector index is built once over both instead of row by row.
      await withVectorIndexesBuiltAfter(db, async () => {
        await fill(t, 'minor', 0, EXACT_SEARCH_LIMIT);
        await fill(t, 'major', 100_000, EXACT_SEARCH_LIMIT + 200);
      });
    });
    after(() => t.close());

    test("consolidation finds a big bank's earlier memories through the vector index", async () => {
      // 'major' is past the exact-search size: neighbours come from the HNSW walk, filtered to
      // earlier memories of the same tag set. (Its own seeds give near-identical vectors; seed 7
      // is one of a kind.)
      await store().insertMemories('default', 'major', [memory(7)], {});
      const [seven] = await store()
        .consolidationSources('default', 'major', 0, EXACT_SEARCH_LIMIT + 201)
        .then((all) => all.filter((m) => m.text === 'synthetic memory 7'));
      assert.ok(seven);
      const ask = (tags: string[], beforeSeq: number) =>
        store().consolidationCandidates('default', 'major', vector(7), {
          observations: false,
          tags,
          beforeSeq,
          limit: 5,
          bankSize: EXACT_SEARCH_LIMIT + 201,
        });
      const hits = await ask([], Number.MAX_SAFE_INTEGER);
      assert.equal(hits.length, 5);
      assert.equal(hits[0]!.id, seven.id);
      assert.ok(hits[0]!.score > 0.999);
      assert.ok(
        hits.every((h, i) => i === 0 || h.score <= hits[i - 1]!.score),
        'nearest first',
      );
      assert.ok(!(await ask([], seven.seq)).some((h) => h.id === seven.id), 'only earlier memories');
      assert.deepEqual(await ask(['other'], Number.MAX_SAFE_INTEGER), [], 'only the same tag set');
    });

    test('Retain queues it for a minority bank past the exact-search size; recall uses it; delete drops it', async () => {
      assert.equal(
        await store().wantedBankIndex('default', 'minor'),
        null,
        'not past the exact-search size yet',
      );
      const r = await t.call('POST', bankPath('minor', '/memories'), {
        body: { items: [{ content: 'one more, and the bank is past the limit' }] },
      });
      assert.equal(r.status, 200);
      assert.equal(await store().wantedBankIndex('default', 'minor'), 100);
      assert.equal(
        await store().wantedBankIndex('default', 'major'),
        null,
        'the shared index serves a majority bank',
      );
      const ops = (await t.call('GET', bankPath('minor', '/operations'))).body.items as {
        id: string;
        kind: string;
      }[];
      const op = ops.find((o) => o.kind === 'vector-index');
      assert.ok(op, 'a vector-index operation is queued');

      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        await until(
          async () => (await t.call('GET', bankPath('minor', `/operations/${op.id}`))).body,
          (o) => o.status === 'completed' || o.status === 'failed',
          120_000,
        ).then((o) => assert.equal(o.status, 'completed', o.error));
      } finally {
        await worker.stop();
      }
      assert.equal(await store().wantedBankIndex('default', 'minor'), null, 'built');

      // The nearest neighbours of a stored vector, through the bank's index: itself first, and
      // only this bank's memories.
      for (const seed of [7, 1234, 3999]) {
        const hits = await store().semanticSearch('default', 'minor', vector(seed), {}, 10);
        assert.equal(hits.length, 10);
        const [first] = await store().getMemories('default', 'minor', [hits[0]!.id]);
        assert.equal(first?.text, `synthetic memory ${seed}`);
        assert.ok(hits[0]!.score > 0.999);
      }

      const own = async () =>
        (
          await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class WHERE relname = $1`, [
            bankIndexName('default', 'minor', 100),
          ])
        )[0]!.n;
      assert.equal(await own(), 1, 'the bank has its index');
      assert.equal((await t.call('DELETE', bankPath('minor'))).status, 200);
      assert.equal(await own(), 0, 'the deleted bank took its index along');
    });
  });
}
