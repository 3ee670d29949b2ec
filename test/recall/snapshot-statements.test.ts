/**
 * The statements a computed Recall sends, in a plain bank and in an encrypted one. A plain bank:
 * the bank's encryption state and version with the vector walk's set-up (one statement), and the
 * channels, in one snapshot; then the candidates while the bank is at that version (a write in
 * between: all of it again in one snapshot). An encrypted one: all in one snapshot, the state read
 * once. Both engines; fails with the state read apart, or the version not checked. On PostgreSQL
 * and on the embedded engine's own thread (`MNEMO_TEST_PGLITE_THREAD=1`) the channels end their
 * snapshot (`queryLast`: sent with its COMMIT, or ended in the thread) and the candidates are one
 * statement outside any; a sealed bank's statements never end its snapshot early.
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
    /** Statements sent outside any transaction, in order. */
    const loose: string[] = [];
    /** A write run once, before the first statement sent after `after` snapshots have begun. */
    let interleave: { after: number; write: () => Promise<void> } | null = null;
    const interleaved = async () => {
      if (interleave?.after !== snapshots.length) return;
      const { write } = interleave;
      interleave = null;
      await write();
    };
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
        query: async (sql, params) => {
          await interleaved();
          loose.push(sql);
          return db.query(sql, params);
        },
        transaction: async (fn, mode) => {
          await interleaved();
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

    const flat = (sql: string) => sql.replace(/\s+/g, ' ');
    /** A Recall's snapshots, and the statements it sent outside them, after the bank's row and the charge. */
    const recall = async (bank: string) => {
      const [n, m] = [snapshots.length, loose.length];
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'what happens at dawn in the lighthouse?' },
      });
      assert.equal(r.status, 200);
      assert.ok(r.body.results.length > 0);
      return {
        r,
        snaps: snapshots.slice(n).map((sent) => sent.map(flat)),
        outside: loose
          .slice(m)
          .map(flat)
          .filter((sql) => !/^SELECT project_id, id, space_id|^WITH p AS/.test(sql)),
      };
    };
    const listed = ({ snaps, outside }: { snaps: string[][]; outside: string[] }) =>
      [
        ...snaps.map((sent) => sent.map((sql) => sql.slice(0, 80)).join('\n')),
        `outside: ${outside.map((sql) => sql.slice(0, 80)).join('\n')}`,
      ].join('\n--\n');
    const lasts = (sent: string[]) => sent.filter((sql) => sql.startsWith('LAST '));
    /** The candidates read after the channels' snapshot: one statement, or parts in a snapshot of their own. */
    const candidatesAfter = (read: { snaps: string[][]; outside: string[] }) =>
      ends ? read.outside : (read.snaps[1] ?? []);

    test('plain bank: the state, the walk and the channels in one snapshot, then the candidates at that version', async () => {
      const read = await recall('plain');
      const list = listed(read);
      const [channels] = read.snaps as [string[]];
      // One read of the bank's row: its state, its size, its version and the walk set up; then the channels.
      assert.equal(channels.length, 2, list);
      assert.match(channels[0]!, /memory_count.*bank_keys/, list);
      assert.match(channels[1]!, /string_agg/, list);
      // The channels end it where the engine can (no COMMIT to wait for).
      assert.deepEqual(lasts(channels), ends ? [channels[1]] : [], list);
      // Then the candidates, while the bank is at the version the channels read: one statement
      // outside any snapshot (the embedded engine in the process: parts in a snapshot of their own).
      assert.equal(read.snaps.length, ends ? 1 : 2, list);
      const candidates = candidatesAfter(read);
      assert.ok(candidates.length > 0, list);
      for (const sql of candidates) assert.match(sql, /similarity.*generation/, list);
      if (ends) assert.equal(candidates.length, 1, list);
    });

    for (const write of ['forgotten', 'retained'] as const)
      test(`plain bank: a memory ${write} between the channels and the candidates, and all is read again in one snapshot`, async () => {
        const ids = (r: { body: { results: { id: string }[] } }) => r.body.results.map((m) => m.id);
        const query = { query: 'what happens at dawn in the lighthouse?' };
        const first = await t.call('POST', bankPath('plain', '/memories/recall'), { body: query });
        const victim = ids(first)[0]!;
        const n = snapshots.length;
        // Once the channels have been read: their best hit is forgotten, or a better one retained.
        interleave = {
          after: n + 1,
          write: async () => {
            const r =
              write === 'forgotten'
                ? await t.call('DELETE', bankPath('plain', `/memories/${victim}`))
                : await t.call('POST', bankPath('plain', '/memories'), {
                    body: {
                      items: [{ content: 'what happens at dawn in the lighthouse: the lamp goes out' }],
                    },
                  });
            assert.ok(r.status < 300, JSON.stringify(r.body));
          },
        };
        const raced = await t.call('POST', bankPath('plain', '/memories/recall'), { body: query });
        assert.equal(interleave, null, 'the write ran');
        const snaps = snapshots.slice(n).map((sent) => sent.map(flat));
        const list = listed({ snaps, outside: [] });
        // The channels, the candidates refused (the bank's version moved), then all in one
        // snapshot: the set-up, the channels and the candidates, which end it.
        const all = snaps.at(-1)!;
        assert.equal(snaps.length, ends ? 2 : 3, list);
        assert.equal(all.length, 3, list);
        assert.match(all[2]!, /similarity/, list);
        assert.doesNotMatch(all[2]!, /generation/, list);
        if (write === 'forgotten') assert.ok(!ids(raced).includes(victim));
        else assert.match(raced.body.results[0].text, /the lamp goes out/);
        const after = await t.call('POST', bankPath('plain', '/memories/recall'), { body: query });
        assert.deepEqual(raced.body.results, after.body.results);
      });

    test('sealed bank: in one snapshot, its state read once, nothing ending it early', async () => {
      // The first Recall finds the data key (the channels written for a plain bank are not used);
      // later ones go to one snapshot at once.
      await recall('sealed');
      const read = await recall('sealed');
      const list = listed(read);
      assert.deepEqual(read.snaps[0], [], `the first sends nothing: ${list}`);
      assert.equal(read.snaps.length, 2, list);
      const sent = read.snaps[1]!;
      assert.equal(sent.filter((sql) => /bank_keys|set_config/.test(sql)).length, 1, list);
      assert.match(sent[0]!, /memory_count.*bank_keys/, list);
      // It reads its vectors in memory (statements of the vector cache) after the candidates.
      assert.deepEqual(lasts(sent), [], list);
    });
  });
}
