/**
 * The statements a computed Recall sends inside its snapshots, in a plain bank and in an encrypted
 * one. A plain bank: the bank's encryption state and version with the vector walk's set-up (one
 * statement), and the channels, in one snapshot; then its version and the candidates in another.
 * An encrypted one: all in one snapshot, the state read once. Both engines; fails with the state
 * read apart. On PostgreSQL and on the embedded engine's own thread (`MNEMO_TEST_PGLITE_THREAD=1`)
 * a plain bank's channels and candidates each end their snapshot (`queryLast`: sent with its
 * COMMIT, or ended in the thread); a sealed bank's statements never do (its vectors are read after).
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
    let interleave: { at: number; write: () => Promise<void> } | null = null;
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
        transaction: async (fn, mode) => {
          // A write run before the snapshot numbered `interleave.at` begins (once).
          if (mode === 'snapshot' && interleave?.at === snapshots.length) {
            const { write } = interleave;
            interleave = null;
            await write();
          }
          return db.transaction((tx) => {
            const seen: string[] = [];
            if (mode === 'snapshot') snapshots.push(seen);
            return fn(counted(tx, seen));
          }, mode);
        },
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

    const recall = async (bank: string) => {
      const n = snapshots.length;
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'what happens at dawn in the lighthouse?' },
      });
      assert.equal(r.status, 200);
      assert.ok(r.body.results.length > 0);
      return snapshots.slice(n).map((sent) => sent.map((sql) => sql.replace(/\s+/g, ' ')));
    };
    const listed = (snaps: string[][]) =>
      snaps.map((sent) => sent.map((sql) => sql.slice(0, 80)).join('\n')).join('\n--\n');
    const lasts = (sent: string[]) => sent.filter((sql) => sql.startsWith('LAST '));

    test('plain bank: the state, the walk and the channels, then the candidates at that version', async () => {
      const snaps = await recall('plain');
      const list = listed(snaps);
      assert.equal(snaps.length, 2, list);
      const [channels, candidates] = snaps as [string[], string[]];
      // One read of the bank's row: its state, its size, its version and the walk set up; then the channels.
      assert.equal(channels.length, 2, list);
      assert.match(channels[0]!, /memory_count.*bank_keys/, list);
      assert.match(channels[1]!, /string_agg/, list);
      // Then the bank's version and the candidates.
      assert.equal(candidates.length, 2, list);
      assert.match(candidates[0]!, /generation/, list);
      assert.doesNotMatch(candidates[0]!, /bank_keys|set_config/, list);
      assert.match(candidates[1]!, /similarity/, list);
      // Each ends its snapshot where the engine can (no COMMIT to wait for).
      assert.deepEqual(lasts(channels), ends ? [channels[1]] : [], list);
      assert.deepEqual(lasts(candidates), ends ? [candidates[1]] : [], list);
    });

    test('plain bank: a write between the channels and the candidates, and all is read again in one snapshot', async () => {
      const ids = (r: { body: { results: { id: string }[] } }) => r.body.results.map((m) => m.id);
      const query = { query: 'what happens at dawn in the lighthouse?' };
      const first = await t.call('POST', bankPath('plain', '/memories/recall'), { body: query });
      const victim = ids(first)[0]!;
      const n = snapshots.length;
      // Before the candidates' snapshot: the best hit of the channels just read is forgotten.
      interleave = {
        at: n + 1,
        write: async () => {
          const r = await t.call('DELETE', bankPath('plain', `/memories/${victim}`));
          assert.ok(r.status < 300, JSON.stringify(r.body));
        },
      };
      const raced = await t.call('POST', bankPath('plain', '/memories/recall'), { body: query });
      assert.equal(interleave, null, 'the write ran');
      const snaps = snapshots.slice(n);
      const list = listed(snaps.map((sent) => sent.map((sql) => sql.replace(/\s+/g, ' '))));
      // The channels, the candidates refused (the bank's version moved), then all in one snapshot.
      assert.equal(snaps.length, 3, list);
      assert.equal(snaps[2]!.length, 3, list);
      assert.ok(!ids(raced).includes(victim));
      const after = await t.call('POST', bankPath('plain', '/memories/recall'), { body: query });
      assert.deepEqual(raced.body.results, after.body.results);
    });

    test('sealed bank: in one snapshot, its state read once, nothing ending it early', async () => {
      // The first Recall finds the data key (the channels written for a plain bank are not used);
      // later ones go to one snapshot at once.
      await recall('sealed');
      const snaps = await recall('sealed');
      const list = listed(snaps);
      assert.deepEqual(snaps[0], [], `the first sends nothing: ${list}`);
      assert.equal(snaps.length, 2, list);
      const sent = snaps[1]!;
      assert.equal(sent.filter((sql) => /bank_keys|set_config/.test(sql)).length, 1, list);
      assert.match(sent[0]!, /memory_count.*bank_keys/, list);
      // It reads its vectors in memory (statements of the vector cache) after the candidates.
      assert.deepEqual(lasts(sent), [], list);
    });
  });
}
