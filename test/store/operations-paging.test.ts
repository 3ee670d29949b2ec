import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`listing operations page by page (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      store = storeOver(db);
      await store.ensureBank('default', 'b', {});
    });
    after(() => dispose());

    test('operations created at the same instant are each listed once', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const id = randomUUID();
        await store.insertOperation({
          projectId: 'default',
          bankId: 'b',
          id,
          kind: 'retain',
          payload: {},
          itemsCount: 1,
        });
        ids.push(id);
      }
      // Four created in the same instant (one transaction; or one millisecond on the embedded engine).
      await db.exec(
        `UPDATE operations SET created_at = '2030-01-01T00:00:00Z' WHERE id::text IN ('${ids.slice(2, 6).join("','")}')`,
      );
      const listed: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listOperations('default', 'b', {}, { limit: 2, cursor });
        listed.push(...page.items.map((o) => o.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      assert.deepEqual([...listed].sort(), [...ids].sort());
      assert.equal(new Set(listed).size, listed.length, 'an operation listed twice');

      // A cursor of the earlier form (the time only) still reads as "strictly older".
      const tied = Date.parse('2030-01-01T00:00:00Z') * 1000;
      const old = Buffer.from(String(tied)).toString('base64url');
      const older = await store.listOperations('default', 'b', {}, { limit: 50, cursor: old });
      assert.deepEqual(older.items.map((o) => o.id).sort(), [...ids.slice(0, 2), ...ids.slice(6)].sort());
    });
  });
}
