import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isoTime, jsonText } from './json-text.js';

test('isoTime writes what Date.prototype.toJSON does, for every time value', () => {
  const edges = [
    0,
    -1,
    1,
    951_782_400_000,
    951_868_799_999,
    4_107_542_400_000,
    -62_167_219_200_000,
    -62_167_219_200_001,
    253_402_300_799_999,
    253_402_300_800_000,
    8.64e15,
    -8.64e15,
    NaN,
    Number.POSITIVE_INFINITY,
    1.5,
    -0.5,
    -1.5,
    8.64e15 + 1,
  ];
  for (const t of edges) assert.equal(isoTime(t), new Date(t).toJSON(), String(t));
  fc.assert(
    fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (t) => isoTime(t) === new Date(t).toJSON()),
    { numRuns: 20_000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: -70_000_000_000_000, max: 260_000_000_000_000 }), (t) => {
      return isoTime(t) === new Date(t).toJSON();
    }),
    { numRuns: 20_000 },
  );
});

test('jsonText is JSON.stringify byte for byte, and changes nothing it is given', () => {
  class Point {
    constructor(
      readonly x: number,
      readonly at: Date,
    ) {}
  }
  const when = new Date('2024-02-29T23:59:59.999Z');
  const parsed = JSON.parse('{"__proto__": {"a": 1}, "b": 2}') as object;
  const result = Object.freeze({
    id: 'm1',
    occurred_start: when,
    occurred_end: null,
    mentioned_at: new Date(Number.NaN),
    '2': 'integer keys first',
    skipped: undefined,
    metadata: { at: new Date(0), deep: [new Date(1)] },
    entities: ['x'],
    scores: { final: 0.5 },
  });
  const bodies: object[] = [
    Object.freeze({ results: Object.freeze([result, result]), usage: { tokens_used: 3 } }),
    { results: [{ a: 1 }, 'text', 3, null, when, [when], new Point(1, when)], at: when },
    [{ at: when, parsed }, when, { nested: { at: when } }],
    { parsed, own: { toJSON: () => 'own' }, map: new Map([[1, 2]]), at: when },
    { plain: 'no dates at all', list: [1, 2, 3] },
    Object.assign(Object.create(null) as object, { at: when, n: 1 }),
    [],
    {},
  ];
  for (const body of bodies) {
    const before = JSON.stringify(body);
    assert.equal(jsonText(body), before);
    assert.equal(JSON.stringify(body), before, 'the body itself is unchanged');
  }
  assert.equal(result.occurred_start, when);
});
