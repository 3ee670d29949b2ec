import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anchoredWindow, parseEventAnchor } from './event-anchor.js';

const DAY = 86_400_000;

test('event anchors: distance, direction and the event words', () => {
  const table: [string, { terms: string[]; days: number } | null][] = [
    ['What did Caroline do two weeks before the wedding?', { terms: ['wed'], days: -14 }],
    ['where did we go the day after my graduation', { terms: ['graduat'], days: 1 }],
    ['a few months after the move to Boston', { terms: ['move'], days: 90 }],
    ['3 days prior to the charity race?', { terms: ['chariti', 'race'], days: -3 }],
    ['a year following her promotion', { terms: ['promot'], days: 365 }],
    ['the week before the camping trip when it rained', { terms: ['camp', 'trip'], days: -7 }],
    ['What did I do last June?', null],
    ['two weeks before the', null],
  ];
  for (const [query, want] of table) {
    const got = parseEventAnchor(query);
    if (want === null) {
      assert.equal(got, null, query);
      continue;
    }
    assert.ok(got, query);
    assert.deepEqual(got.terms, want.terms, query);
    assert.equal(got.offsetMs, want.days * DAY, query);
  }
});

test('the anchored window is centred on the moved event, half the offset wide each side', () => {
  const anchor = parseEventAnchor('two weeks before the wedding')!;
  const w = anchoredWindow(anchor, new Date('2023-06-30T00:00:00Z'));
  assert.equal(w.start.toISOString(), '2023-06-09T00:00:00.000Z');
  assert.equal(w.end.toISOString(), '2023-06-23T00:00:00.000Z');
  const dayAfter = anchoredWindow(
    parseEventAnchor('the day after the party')!,
    new Date('2023-06-30T00:00:00Z'),
  );
  assert.equal(dayAfter.start.toISOString(), '2023-06-30T00:00:00.000Z');
  assert.equal(dayAfter.end.toISOString(), '2023-07-02T00:00:00.000Z');
});
