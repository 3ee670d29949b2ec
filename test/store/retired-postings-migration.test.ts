/**
 * Migration 39 on a database that curation used before it: a memory invalidated then still had
 * its keyword postings in the index and counted as a mention of its entities. Migrating moves its
 * postings into its row (exact document frequencies), stops counting it, and a restore puts
 * everything back as it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/store/migrate.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { integrityProblems } from '../stress/integrity.js';

for (const engine of ENGINES) {
  describe(`migration 39: postings of memories invalidated before it (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      t = await testApp(engine, { store: Object.assign(storeOver(db), { dispose: opened.dispose }) });
    });
    after(() => t.close());

    const postings = (id: string) =>
      db.query<{ term: string; tf: number; dl: number }>(
        'SELECT term, tf, dl FROM memory_terms WHERE memory_id = $1 ORDER BY term',
        [id],
      );
    const mentions = async () =>
      (await t.call('GET', bankPath('old', '/entities'))).body.items.map(
        (e: { name: string; mention_count: number }) => [e.name, e.mention_count],
      );

    test('moves them out of the index and the mention counts; a restore brings them back', async () => {
      const r = await t.call('POST', bankPath('old', '/memories'), {
        body: {
          items: [
            { content: 'Ines keeps goats near Braga.', entities: [{ text: 'Ines' }] },
            { content: 'Ines sells goat cheese on Fridays.', entities: [{ text: 'Ines' }] },
          ],
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const [gone] = r.body.memory_ids as string[];
      const indexed = await postings(gone!);
      assert.ok(indexed.length > 3);
      assert.equal(
        (await t.call('PATCH', bankPath('old', `/memories/${gone}`), { body: { state: 'invalidated' } }))
          .status,
        200,
      );

      // The database as version 38 left it: the invalidated memory's postings and mentions counted.
      await db.exec(`
        INSERT INTO memory_terms (project_id, bank_id, memory_id, term, tf, dl)
          SELECT m.project_id, m.bank_id, m.id, r.key, r.value::real, m.term_count
          FROM memories m CROSS JOIN LATERAL jsonb_each_text(m.retired_terms) r;
        INSERT INTO bank_terms (project_id, bank_id, term, df)
          SELECT m.project_id, m.bank_id, r.key, 1 FROM memories m CROSS JOIN LATERAL jsonb_each_text(m.retired_terms) r
          ON CONFLICT (project_id, bank_id, term) DO UPDATE SET df = bank_terms.df + 1;
        UPDATE entities SET mention_count = 2;
        INSERT INTO bank_terms (project_id, bank_id, term, df) VALUES ('default', 'old', 'leftover', 0);
        ALTER TABLE memories DROP COLUMN retired_terms;
        DELETE FROM schema_migrations WHERE version = 39;`);
      assert.deepEqual(await postings(gone!), indexed);

      assert.deepEqual(await migrate(db), [39]);
      assert.deepEqual(await postings(gone!), []);
      assert.deepEqual(await integrityProblems(db), []);
      assert.deepEqual(await mentions(), [['Ines', 1]]);
      assert.deepEqual(
        await db.query(`SELECT term FROM bank_terms WHERE term = 'leftover'`),
        [],
        'a term no memory holds leaves the vocabulary',
      );
      assert.equal(
        (await t.call('PATCH', bankPath('old', `/memories/${gone}`), { body: { state: 'valid' } })).status,
        200,
      );
      assert.deepEqual(await postings(gone!), indexed);
      assert.deepEqual(await mentions(), [['Ines', 2]]);
      assert.deepEqual(await integrityProblems(db), []);
    });
  });
}
