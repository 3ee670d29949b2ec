/**
 * The statements a computed Recall sends inside its snapshot, in a plain bank and in an encrypted
 * one: the bank's encryption state comes with the vector walk's set-up (one statement, not two),
 * then the channels and the candidates. Both engines; fails with the state read apart. On
 * PostgreSQL and on the embedded engine's own thread (`MNEMO_TEST_PGLITE_THREAD=1`) a plain bank's
 * candidates end the snapshot (`queryLast`: sent with its COMMIT, or ended in the thread); a
 * sealed bank's never do (its vectors are read after them).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Db, Queryable } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`statements of a Recall's snapshot (${engine})`, () => {
    let t: TestApp;
    /** The statements of each snapshot transaction, in order. */
    const snapshots: string[][] = [];
    /** Whether the engine ends a snapshot with its last statement (PostgreSQL, the embedded engine's thread). */
    let ends = false;
    before(async () => {
      const { db, dispose } = await openTestDb(engine);
      ends = db.engine === 'postgres' || db.ownThread === true;
      const counted = (tx: Queryable, seen: string[]): Queryable => ({
        query: (sql, params) => {
          seen.push(sql);
          return tx.query(sql, params);
        },
        exec: (sql) => {
          seen.push(sql);
          return tx.exec(sql);
        },
        queryLast:
          tx.queryLast &&
          ((sql, params) => {
            seen.push(`LAST ${sql}`);
            return tx.queryLast!(sql, params);
          }),
      });
      const counting: Db = {
        ...db,
        transaction: (fn, mode) =>
          db.transaction((tx) => {
            const seen: string[] = [];
            if (mode === 'snapshot') snapshots.push(seen);
            return fn(counted(tx, seen));
          }, mode),
      };
      t = await testApp(engine, {
        store: Object.assign(storeOver(counting), { dispose }),
        recallCacheSize: 0,
        masterKey: randomBytes(32).toString('base64'),
      });
      const items = [
        { content: 'the kettle whistles at dawn in the lighthouse' },
        { content: 'Dana brews smoky tea at dawn' },
        { content: 'the lighthouse keeper paints the stairs' },
      ];
      for (const bank of ['plain', 'sealed']) {
        if (bank === 'sealed') {
          assert.equal((await t.call('PUT', bankPath(bank), { body: {} })).status, 200);
          const on = await t.call('PATCH', bankPath(bank, '/config'), {
            body: { updates: { encryption: 'managed' } },
          });
          assert.equal(on.status, 200, JSON.stringify(on.body));
        }
        assert.equal((await t.call('POST', bankPath(bank, '/memories'), { body: { items } })).status, 200);
      }
    });
    after(() => t.close());

    for (const bank of ['plain', 'sealed']) {
      test(`${bank} bank: the state and the walk, the channels, the candidates`, async () => {
        const n = snapshots.length;
        const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
          body: { query: 'what happens at dawn in the lighthouse?' },
        });
        assert.equal(r.status, 200);
        assert.ok(r.body.results.length > 0);
        assert.equal(snapshots.length, n + 1);
        const sent = snapshots[n]!.map((sql) => sql.replace(/\s+/g, ' '));
        const list = sent.map((sql) => sql.slice(0, 80)).join('\n');
        // One read of the bank's row in the snapshot: its state, its size and the walk set up.
        assert.equal(sent.filter((sql) => /bank_keys|set_config/.test(sql)).length, 1, list);
        assert.match(sent[0]!, /memory_count.*bank_keys/, list);
        // The plain bank then sends the channels and the candidates; the sealed one reads its
        // vectors in memory (statements of the vector cache), as before.
        if (bank === 'plain') assert.equal(sent.length, 3, list);
        // The candidates end a plain bank's snapshot where the engine can (no COMMIT to wait for).
        const last = sent.filter((sql) => sql.startsWith('LAST '));
        if (bank === 'plain' && ends) assert.deepEqual(last, [sent[2]], list);
        else assert.deepEqual(last, [], list);
      });
    }
  });
}
