/**
 * Recall runs its retrieval channels in one statement (`searchChannels`): each channel's hits,
 * in order and with their scores, are exactly what that channel's own query returns, with and
 * without filters, a time window and the graph, on both engines; also when sent with the
 * snapshot's first statement for a bank thought of another size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { analyzeQuery } from '../../src/core/recall/query.js';
import { EXACT_SEARCH_LIMIT } from '../../src/store/exact-search.js';
import { mayEndWithChannels } from '../../src/store/sql/search.js';
import type { MemoryFilter } from '../../src/store/records.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const NAMES = ['Alice', 'Bob', 'Carmen', 'Deepak'];
const THINGS = [
  'a beagle named Pepper',
  'the blue canoe',
  'a lemon tree',
  'a vintage camera',
  'the old bicycle',
];
const PLACES = ['in Lisbon', 'at the market', 'in Kyoto', 'by the lake'];

for (const engine of ENGINES) {
  describe(`recall channels in one statement (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      const items = Array.from({ length: 60 }, (_, i) => ({
        content: `${NAMES[i % 4]} saw ${THINGS[(i * 3) % 5]} ${PLACES[(i * 7) % 4]} with ${NAMES[(i + 1) % 4]}.`,
        timestamp: new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString(),
        tags: i % 3 === 0 ? ['trip'] : [],
      }));
      const r = await t.call('POST', bankPath('one', '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });
    after(() => t.close());

    const cases: { query: string; filter: MemoryFilter; window?: { start: Date; end: Date } }[] = [
      { query: 'Did Alice see the blue canoe in Lisbon with Bob?', filter: {} },
      {
        query: 'What did Carmen see at the market?',
        filter: { tags: ['trip'], tagsMatch: 'any_strict' },
        window: { start: new Date('2024-01-10T00:00:00Z'), end: new Date('2024-02-01T00:00:00Z') },
      },
      {
        query: 'Deepak vintage camera Kyoto',
        filter: { mentionedBefore: new Date('2024-02-15T00:00:00Z'), types: ['world', 'experience'] },
        window: { start: new Date('2024-01-20T00:00:00Z'), end: new Date('2024-01-25T00:00:00Z') },
      },
      { query: 'zzzz qqqq', filter: {} },
    ];

    const aliceQuery = () =>
      analyzeQuery(t.services, 'Alice blue canoe Lisbon', new Date('2024-03-01T00:00:00Z'), undefined);

    test('the keyword channel alone under every filter (an encrypted bank searches vectors in memory)', async () => {
      const s = t.services.store;
      const q = await aliceQuery();
      const filter: MemoryFilter = {
        types: ['world', 'experience'],
        tags: ['trip'],
        mentionedBefore: new Date('2024-03-01T00:00:00Z'),
        state: 'valid',
      };
      const one = await s.searchChannels(
        'default',
        'one',
        { vector: null, terms: q.terms, window: null, graph: null },
        filter,
        20,
      );
      assert.deepEqual(one.keyword, await s.keywordSearch('default', 'one', q.terms, filter, 20));
      assert.ok(one.keyword.length > 0, 'the filter keeps memories');
    });

    test('the channels end the snapshot unless a filter narrows a bank walked through the index', async () => {
      const s = t.services.store;
      const q = await aliceQuery();
      const query = { vector: q.vector, terms: q.terms, window: null, graph: null };
      const narrow: MemoryFilter = { tags: ['trip'], state: 'valid' };
      const big = EXACT_SEARCH_LIMIT + 1;
      // A walk of the index that may come back short: one snapshot at once, not the channels twice.
      assert.equal(mayEndWithChannels({ ...query, expectedSize: big }, narrow), false);
      for (const filter of [{ types: ['world' as const] }, { documentId: 'd' }])
        assert.equal(mayEndWithChannels({ ...query, expectedSize: big }, filter), false);
      assert.equal(mayEndWithChannels({ ...query, expectedSize: big }, { state: 'valid' }), true);
      assert.equal(mayEndWithChannels({ ...query, expectedSize: 60 }, narrow), true);
      assert.equal(mayEndWithChannels({ ...query, vector: null, expectedSize: big }, narrow), true);
      const ended = await s.readSnapshot((store) =>
        store.lastSearchChannels('default', 'one', { ...query, expectedSize: 60 }, narrow, 20),
      );
      assert.ok(ended?.version, 'answered, with the version read');
      const { version: _, ...hits } = ended;
      assert.deepEqual(
        hits,
        await s.readSnapshot((store) => store.searchChannels('default', 'one', query, narrow, 20)),
      );
      assert.equal(
        await s.readSnapshot((store) =>
          store.lastSearchChannels('default', 'one', { ...query, expectedSize: big }, narrow, 20),
        ),
        null,
      );
    });

    for (const [i, c] of cases.entries()) {
      test(`case ${i}: every channel as alone`, async () => {
        const s = t.services.store;
        const q = await analyzeQuery(t.services, c.query, new Date('2024-03-01T00:00:00Z'), undefined);
        const limit = 20;
        const window = c.window ?? null;
        const one = await s.readSnapshot((store) =>
          store.searchChannels(
            'default',
            'one',
            { vector: q.vector, terms: q.terms, window, graph: { probes: q.entityProbes, depth: 1 } },
            c.filter,
            limit,
          ),
        );
        const alone = {
          semantic: await s.semanticSearch('default', 'one', q.vector, c.filter, limit),
          keyword: await s.keywordSearch('default', 'one', q.terms, c.filter, limit),
          temporal: window ? await s.temporalSearch('default', 'one', window, c.filter, limit) : [],
          graph: await s.graphSearch('default', 'one', q.entityProbes, c.filter, limit, 1),
        };
        assert.deepEqual(one, alone);
        // Sent with the snapshot's first statement (`openSearchChannels`), written for the bank's
        // size, or for a size past the exact-search limit (its vectors then searched again).
        for (const expectedSize of [60, EXACT_SEARCH_LIMIT + 1]) {
          const sent = await s.readSnapshot((store) =>
            store.searchChannels(
              'default',
              'one',
              {
                vector: q.vector,
                terms: q.terms,
                window,
                graph: { probes: q.entityProbes, depth: 1 },
                expectedSize,
              },
              c.filter,
              limit,
            ),
          );
          assert.deepEqual(sent, alone, `written for ${expectedSize} memories`);
        }
        if (i < 3) assert.ok(one.semantic.length > 0 && one.keyword.length > 0, 'the case finds memories');
        if (window) assert.ok(one.temporal.length > 0, 'the window holds memories');
        // A channel given null is off.
        const off = await s.searchChannels(
          'default',
          'one',
          { vector: null, terms: [], window: null, graph: null },
          {},
          5,
        );
        assert.deepEqual(off, { semantic: [], keyword: [], temporal: [], graph: [] });
      });
    }
  });
}
