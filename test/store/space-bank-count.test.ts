/**
 * A space's `bank_count` is a counter kept by triggers on `banks` (migration 47, issue 18): it
 * equals the count of the space's banks after banks are added, moved, unassigned and deleted,
 * one at a time or many in one statement, and after the space itself is deleted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { bankQueries } from '../../src/store/sql/banks.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

const P = 'default';

for (const engine of ENGINES) {
  describe(`a space's bank count (${engine})`, () => {
    let db: Db;
    let dispose: (() => Promise<void>) | undefined;
    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      dispose = opened.dispose;
    });
    after(() => dispose?.());

    /** Each space's counter and its banks counted, side by side. */
    const both = () =>
      db.query<{ id: string; kept: number; counted: number }>(
        `SELECT s.id, s.bank_count AS kept,
                (SELECT count(*)::int FROM banks b WHERE b.project_id = s.project_id AND b.space_id = s.id) AS counted
           FROM spaces s WHERE s.project_id = $1 ORDER BY s.id`,
        [P],
      );
    const check = async (want: Record<string, number>) => {
      const rows = await both();
      for (const r of rows) assert.equal(r.kept, r.counted, `space ${r.id}`);
      assert.deepEqual(Object.fromEntries(rows.map((r) => [r.id, r.kept])), want);
    };

    test('added, moved, unassigned, deleted, and the space deleted', async () => {
      const store = bankQueries(db);
      await store.createSpace(P, { id: 'a', name: 'a' });
      await store.createSpace(P, { id: 'b', name: 'b' });
      await db.exec(`
        INSERT INTO banks (project_id, id, space_id)
          SELECT '${P}', 'bank-' || i, CASE WHEN i % 3 = 0 THEN 'a' WHEN i % 3 = 1 THEN 'b' END
            FROM generate_series(1, 30) i;`);
      await check({ a: 10, b: 10 });
      await db.exec(
        `UPDATE banks SET space_id = 'b' WHERE project_id = '${P}' AND id IN ('bank-3', 'bank-2')`,
      );
      await check({ a: 9, b: 12 });
      // An update that does not move a bank changes nothing.
      await db.exec(
        `UPDATE banks SET memory_count = memory_count + 1, space_id = space_id WHERE project_id = '${P}'`,
      );
      await check({ a: 9, b: 12 });
      await db.exec(
        `UPDATE banks SET space_id = NULL WHERE project_id = '${P}' AND id IN ('bank-6', 'bank-4')`,
      );
      await check({ a: 8, b: 11 });
      await db.exec(`DELETE FROM banks WHERE project_id = '${P}' AND id IN ('bank-9', 'bank-7', 'bank-5')`);
      await check({ a: 7, b: 10 });
      assert.equal((await store.getSpace(P, 'a'))?.bank_count, 7);
      assert.equal(await store.deleteSpace(P, 'a'), 7);
      await check({ b: 10 });
      await store.createSpace(P, { id: 'a', name: 'a again' });
      await check({ a: 0, b: 10 });
      assert.deepEqual(
        (await store.listSpaces(P)).map((s) => [s.id, s.bank_count]),
        [
          ['b', 10],
          ['a', 0],
        ],
      );
    });
  });
}
