/**
 * A Recall of a bank copied into the process (`keyword-memory.ts`) takes its candidates from the
 * copy (`candidatesFromCopy`): no candidates statement is sent, and the answer is the one the
 * statement gives (the same memories in the same order, scores to their sixth place). Both
 * engines; fails when the candidates are read in SQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { KeywordMemory } from '../../src/store/keyword-memory.js';
import { storeOver, storeWith } from '../../src/store/open.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`candidates from the bank's copy (${engine})`, () => {
    let copied: TestApp;
    let plain: TestApp;
    let keywords: KeywordMemory;
    /** Candidates statements sent (they read the similarity at the bank's version), in or outside a snapshot. */
    let statements = 0;
    before(async () => {
      const { db, dispose } = await openTestDb(engine);
      const count = (sql: string) => {
        if (/similarity/.test(sql)) statements++;
      };
      const counting: Db = {
        ...db,
        query: (sql, params) => {
          count(sql);
          return db.query(sql, params);
        },
        transaction: (fn, mode) =>
          db.transaction(
            (tx) =>
              fn({
                ...tx,
                query: (sql, params) => {
                  count(sql);
                  return tx.query(sql, params);
                },
                queryLast:
                  tx.queryLast &&
                  ((sql, params) => {
                    count(sql);
                    return tx.queryLast!(sql, params);
                  }),
              }),
            mode,
          ),
      };
      keywords = new KeywordMemory(counting, 2 ** 26, { loadAfter: 1, loadSpacing: 0 });
      copied = await testApp(engine, {
        store: Object.assign(storeWith(counting, keywords), { dispose }),
        recallCacheSize: 0,
      });
      plain = await testApp(engine, {
        store: Object.assign(storeOver(counting, { keywordCacheMb: 0 }), { dispose: async () => {} }),
        recallCacheSize: 0,
      });
      const items = [
        {
          content: 'Dana brews smoky tea at dawn in the lighthouse',
          tags: ['tea'],
          metadata: { session_id: 's1' },
        },
        { content: 'the kettle whistles at dawn', context: 'a cold morning' },
        { content: 'Dana paints the lighthouse stairs blue on Sunday' },
        { content: 'the keeper of the lighthouse is called Dana' },
        ...Array.from({ length: 30 }, (_, i) => ({
          content: `note ${i}: dawn walks along the pier number ${i}`,
        })),
      ];
      const r = await copied.call('POST', bankPath('copied', '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });
    after(async () => {
      await plain.close();
      await copied.close();
    });

    const recall = async (t: TestApp) => {
      const r = await t.call('POST', bankPath('copied', '/memories/recall'), {
        body: { query: 'what does Dana do at dawn in the lighthouse?' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as { results: { id: string; text: string; scores: Record<string, number> }[] };
    };

    test('no candidates statement, and the answer of the statement', async () => {
      await recall(copied);
      await keywords.idle();
      assert.equal(keywords.stats().banks, 1, 'the bank copied after its first search');
      const sent = statements;
      const fromCopy = await recall(copied);
      assert.equal(statements, sent, 'no candidates statement');
      assert.equal(keywords.stats().candidates, 1, 'the candidates from the copy');
      const fromSql = await recall(plain);
      assert.ok(statements > sent, 'the other store reads them in SQL');
      assert.ok(fromSql.results.length > 5);
      assert.deepEqual(
        fromCopy.results.map((r) => r.id),
        fromSql.results.map((r) => r.id),
      );
      for (const [i, r] of fromCopy.results.entries()) {
        const { scores, ...fields } = r;
        const { scores: want, ...wanted } = fromSql.results[i]!;
        assert.deepEqual(fields, wanted);
        for (const [stage, score] of Object.entries(want))
          assert.ok(Math.abs(scores[stage]! - score) <= 1e-6, `${stage}: ${scores[stage]} against ${score}`);
      }
    });
  });
}
