/**
 * A Retain's body is validated item by item with turns of the event loop between runs of items
 * (src/api/itemwise.ts): the answer is zod's for the whole body (same value, same issues in the
 * same order and paths), a list over its maximum is refused by its length alone, and a 1,000-item
 * body gives the loop turns while it is validated.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ITEMS_PER_TURN } from '../../src/api/itemwise.js';
import '../../src/api/routes/memories.js'; // the route makes RetainBody's validation itemwise
import { MAX_ITEMS, RetainBody } from '../../src/contract/memories.js';

/** zod's own validation of the whole body at once. */
const whole = (body: unknown) => z.safeParseAsync(RetainBody, body);
const items = (n: number, item: (i: number) => unknown) => Array.from({ length: n }, (_, i) => item(i));

describe('itemwise validation of a Retain', () => {
  test('answers as zod does for the whole body', async () => {
    const bodies = [
      {
        items: items(40, (i) => ({ content: `x${i}`, entities: [{ text: 'a' }], metadata: { a: i } })),
        document_id: 'd',
      },
      {
        items: items(40, (i) => (i % 7 === 3 ? { content: '', tags: [1] } : { content: 'x', extra: 1 })),
        document_id: 5,
      },
      {
        items: items(40, () => ({ content: 'x' })),
        operation_id: 'y'.repeat(100),
        async: true,
        unknown: [1],
      },
      { items: items(40, (i) => (i === 39 ? 'not an item' : { content: 'x', timestamp: 'nope' })) },
      { items: items(MAX_ITEMS, (i) => ({ content: `c${i}`, fact_type: i === 999 ? 'nope' : 'world' })) },
      { items: items(MAX_ITEMS + 1, () => ({ content: 'x' })) },
      { items: items(MAX_ITEMS + 1, () => ({ content: 'x' })), document_id: 5 },
      { items: [{ content: 'x' }] },
      { items: [] },
      { items: 'no' },
    ];
    for (const body of bodies) {
      const got = await RetainBody.safeParseAsync(body);
      const want = await whole(body);
      assert.equal(got.success, want.success);
      if (got.success && want.success) assert.deepStrictEqual(got.data, want.data);
      else assert.deepStrictEqual(got.error?.issues, want.error?.issues);
    }
  });

  test('a list over its maximum is refused by its length, before its items are walked', async () => {
    const body = { items: items(MAX_ITEMS + 1, () => ({ content: '' })) };
    const got = await RetainBody.safeParseAsync(body);
    assert.equal(got.success, false);
    assert.deepStrictEqual(
      got.error?.issues.map((i) => [i.path.join('.'), i.code]),
      [['items', 'too_big']],
    );
  });

  test('a 1,000-item body gives the event loop turns while it is validated', async () => {
    const body = {
      items: items(MAX_ITEMS, (i) => ({ content: `note ${i}`, entities: [{ text: `E${i}` }] })),
    };
    let turns = 0;
    let done = false;
    const spin = () => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const r = await RetainBody.safeParseAsync(body);
    done = true;
    assert.equal(r.success, true);
    // One turn per ITEMS_PER_TURN items (zod at once gave none: the spin had not run once).
    assert.ok(turns >= MAX_ITEMS / ITEMS_PER_TURN - 1, `${turns} turns`);
  });
});
