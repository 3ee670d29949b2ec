/**
 * A queued payload longer than a part (an async Retain's body, up to 10 MB) is written and read
 * a part a statement (issue 18: one 1.1 MB payload in one statement held the embedded engine's
 * thread 26–52 ms of CPU, growing with the body), and stays one value: read back equal, all or
 * nothing on a failed write, gone with its operation or when a forget empties it, converted
 * whole by an encryption switch. Time is measured by `npm run bench -- isolation`, not here.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Db, Queryable } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { PAYLOAD_PART_CHARS, payloadParts } from '../../src/store/sql/payload-parts.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

const P = 'default';
const BANK = 'parts';

/** ~700 KB of JSON: items whose text holds astral characters (surrogate pairs) everywhere. */
const bigPayload = (tag: string) => ({
  items: Array.from({ length: 2000 }, (_, i) => ({
    content: `${tag} item ${i}: 🦀 café ${'x'.repeat(i % 7)} 𝄞 ${'y'.repeat(300)}`,
  })),
});

/** The database seen through a recorder of every statement and its longest text parameter. */
function recorded(db: Db, seen: { sql: string; longest: number }[], failPart?: { at: number }): Db {
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      const longest = Math.max(0, ...(params ?? []).map((p) => (typeof p === 'string' ? p.length : 0)));
      seen.push({ sql, longest });
      if (failPart && /INSERT INTO operation_payload_parts/.test(sql) && params?.[3] === failPart.at)
        return Promise.reject(new Error('disk full'));
      return q.query(sql, params);
    },
    exec: (sql) => q.exec(sql),
  });
  return { ...db, ...wrap(db), transaction: (fn, mode) => db.transaction((tx) => fn(wrap(tx)), mode) };
}

test('payloadParts never cuts a surrogate pair and loses nothing', () => {
  const text = JSON.stringify(bigPayload('t'));
  for (const size of [5, 64, 1001, PAYLOAD_PART_CHARS]) {
    const parts = payloadParts(text, size);
    assert.equal(parts.join(''), text);
    for (const p of parts) {
      assert.ok(p.length <= size);
      assert.ok(!/[\ud800-\udbff]$/.test(p) && !/^[\udc00-\udfff]/.test(p), 'whole characters');
    }
  }
});

for (const engine of ENGINES) {
  describe(`queued payloads in parts (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    const seen: { sql: string; longest: number }[] = [];
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      store = storeOver(recorded(db, seen));
      await store.ensureBank(P, BANK, {});
    });
    after(() => dispose());

    const queue = (s: Store, payload: unknown, id: string = randomUUID()) =>
      s.insertOperation({ projectId: P, bankId: BANK, id, kind: 'retain', payload, itemsCount: 1 });
    const partRows = async (id: string) =>
      (
        await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM operation_payload_parts WHERE bank_id = $1 AND operation_id = $2',
          [BANK, id],
        )
      )[0]!.n;

    test('written and read back a part a statement, equal; a small payload stays whole', async () => {
      const payload = bigPayload('a');
      const text = JSON.stringify(payload);
      seen.length = 0;
      const { operation, created } = await queue(store, payload);
      assert.ok(created);
      const expected = Math.ceil(text.length / PAYLOAD_PART_CHARS);
      assert.ok(expected >= 3, `${expected} parts`);
      assert.equal(await partRows(operation.id), expected);
      for (const s of seen) assert.ok(s.longest <= PAYLOAD_PART_CHARS, `${s.longest} chars in one statement`);
      seen.length = 0;
      const read = await store.operationPayload(P, BANK, operation.id);
      assert.deepEqual(read, { payload, bytes: text.length });
      assert.ok(seen.filter((s) => /FROM operation_payload_parts/.test(s.sql)).length >= expected);
      const [row] = await db.query<{ n: number }>(
        'SELECT length(payload::text)::int AS n FROM operations WHERE bank_id = $1 AND id = $2',
        [BANK, operation.id],
      );
      assert.ok(row!.n < 100, 'the row holds a stub');
      // A claim that asks for the payload gets it whole.
      const claimed = await store.claimOperation('w', 60_000);
      assert.equal(claimed?.operation.id, operation.id);
      assert.deepEqual(claimed?.payload, payload);
      // The same id queued again: the first kept, nothing written twice.
      assert.equal((await queue(store, bigPayload('b'), operation.id)).created, false);
      assert.deepEqual((await store.operationPayload(P, BANK, operation.id))?.payload, payload);
      const small = await queue(store, { items: [{ content: 'short' }] });
      assert.equal(await partRows(small.operation.id), 0);
      assert.deepEqual((await store.operationPayload(P, BANK, small.operation.id))?.payload, {
        items: [{ content: 'short' }],
      });
    });

    test('a failed part leaves no operation and no part', async () => {
      const failing = storeOver(recorded(db, [], { at: 1 }));
      const id = randomUUID();
      await assert.rejects(queue(failing, bigPayload('c'), id), /disk full/);
      assert.equal(await store.getOperation(P, BANK, id), null);
      assert.equal(await partRows(id), 0);
    });

    test('parts go with their operation, and when a forget empties its payload', async () => {
      const a = (await queue(store, bigPayload('d'))).operation;
      const b = (await queue(store, bigPayload('e'))).operation;
      await db.query(`UPDATE operations SET payload = '{}'::jsonb WHERE bank_id = $1 AND id = $2`, [
        BANK,
        a.id,
      ]);
      assert.equal(await partRows(a.id), 0);
      assert.deepEqual((await store.operationPayload(P, BANK, a.id))?.payload, {});
      await db.query('DELETE FROM operations WHERE bank_id = $1 AND id = $2', [BANK, b.id]);
      assert.equal(await partRows(b.id), 0);
      assert.equal(await store.operationPayload(P, BANK, b.id), null);
    });

    test('an encryption switch converts a payload in parts whole, both ways', async () => {
      await db.query('DELETE FROM operations WHERE bank_id = $1', [BANK]);
      const payload = bigPayload('f');
      const { operation } = await queue(store, payload);
      const setTarget = (t: string) =>
        db.query(
          `UPDATE banks SET config = config || jsonb_build_object('encryption', $2::text) WHERE id = $1`,
          [BANK, t],
        );
      // A stand-in for sealing: the payload's text under the sealed member, reversed.
      const seal = (p: unknown) => ({ '\u0001e1': [...JSON.stringify(p)].reverse().join('') });
      const open = (p: unknown) =>
        JSON.parse([...(p as Record<string, string>)['\u0001e1']!].reverse().join('')) as unknown;
      await setTarget('managed');
      assert.equal(await store.convertPayloads(P, BANK, true, 10, seal), 1);
      assert.equal(await store.convertPayloads(P, BANK, true, 10, seal), 0, 'found sealed: not again');
      const sealed = await store.operationPayload(P, BANK, operation.id);
      assert.deepEqual(open(sealed?.payload), payload);
      assert.ok((await partRows(operation.id)) >= 3);
      await setTarget('none');
      assert.equal(await store.convertPayloads(P, BANK, false, 10, open), 1);
      assert.equal(await store.convertPayloads(P, BANK, false, 10, open), 0);
      assert.deepEqual((await store.operationPayload(P, BANK, operation.id))?.payload, payload);
      // Converted to a payload that fits one part: stored whole, its parts dropped.
      await setTarget('managed');
      assert.equal(await store.convertPayloads(P, BANK, true, 10, () => ({ '\u0001e1': 'small' })), 1);
      assert.equal(await partRows(operation.id), 0);
      assert.deepEqual((await store.operationPayload(P, BANK, operation.id))?.payload, {
        '\u0001e1': 'small',
      });
    });
  });
}
