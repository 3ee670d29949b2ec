/**
 * The keyword channel reads postings by index-only scans, which visit the table for every posting
 * on a page the visibility map does not mark all-visible: over a 10k bank just loaded, one heap
 * fetch per posting (~1,800 a question) and ~1 ms more database CPU per Recall (docs/recall.md).
 * Only VACUUM marks pages. PGlite has no autovacuum, so the store vacuums there; a PostgreSQL
 * server with autovacuum off (as the test and benchmark server runs) is in the same case, and the
 * store vacuums the postings there too. With autovacuum on, that is left to autovacuum.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { seedItems } from '../../bench/load-driver.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { storeOver } from '../../src/store/open.js';
import type { Db } from '../../src/store/db.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const BANK = 'postings';
/** Memories enough for the postings to pass 100 pages (~8 postings a memory, ~100 a page). */
const MEMORIES = 1600;

for (const engine of ENGINES) {
  describe(`postings' visibility after a load (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      t = await testApp(engine, { store: Object.assign(storeOver(db), { dispose: opened.dispose }) });
    });
    after(() => t.close());

    test('searching leaves most postings pages all-visible when nothing else vacuums', async () => {
      for (let i = 0; i < MEMORIES; i += 400) {
        const r = await t.call('POST', bankPath(BANK, '/memories'), { body: { items: seedItems(i, 400) } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const pages = () =>
        db.query<{ pages: number; visible: number; autovacuum: string }>(
          `SELECT pg_relation_size('memory_terms') / current_setting('block_size')::int AS pages,
             relallvisible::int AS visible, current_setting('autovacuum') AS autovacuum
           FROM pg_class WHERE oid = 'memory_terms'::regclass`,
        );
      const [first] = await pages();
      assert.ok(first!.pages > 100, `postings on ${first!.pages} pages`);
      if (engine === 'postgres' && first!.autovacuum === 'on') return; // autovacuum's to do
      // Recall checks the statistics at most once a second: ask until the check has run.
      const [last] = await until(
        async () => {
          const r = await t.call('POST', bankPath(BANK, '/memories/recall'), {
            body: { query: 'Did Grace borrow the tomato plants?', budget: 'mid' },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
          return pages();
        },
        ([p]) => p!.visible >= p!.pages / 2,
        15_000,
      );
      assert.ok(last!.visible >= last!.pages / 2, JSON.stringify(last));
    });
  });
}
