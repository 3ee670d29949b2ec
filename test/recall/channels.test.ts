/**
 * Each retrieval channel finds what only it can find, and the bank config switches the
 * graph and temporal channels off. "Found by a channel" is read from that channel's score
 * (and isolated with `min_scores`), since in a small bank every memory is a semantic candidate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

type Scores = {
  semantic: number;
  keyword: number;
  graph: number;
  temporal: number;
  reranker: number;
  final: number;
} & Record<string, number>;

for (const engine of ENGINES) {
  describe(`recall channels (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const retain = async (bank: string, items: unknown[]) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.memory_ids as string[];
    };
    const configure = async (bank: string, updates: Record<string, unknown>) => {
      const r = await t.call('PATCH', bankPath(bank, '/config'), { body: { updates } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    const recall = async (bank: string, body: Record<string, unknown>) => {
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), { body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results as { id: string; text: string; scores: Scores }[];
    };

    const distractors = [
      { content: 'The weather was grey and windy all afternoon.' },
      { content: 'We ordered pizza and watched a film at home.' },
      { content: 'The train to the city was twenty minutes late.' },
      { content: 'I repainted the kitchen cabinets a pale green.' },
    ];

    test('keyword alone: a word no embedding knows', async () => {
      const bank = 'ch-keyword';
      await retain(bank, [
        ...distractors,
        { content: 'The router password is zxqvbnmw, written under the desk.' },
      ]);
      const results = await recall(bank, { query: 'zxqvbnmw' });
      assert.equal(results[0]!.text, 'The router password is zxqvbnmw, written under the desk.');
      assert.ok(results[0]!.scores.keyword > 0.5);
      // The query has no word the embedder knows: its vector is orthogonal to every memory.
      assert.ok(Math.abs(results[0]!.scores.semantic) < 0.05, `semantic ${results[0]!.scores.semantic}`);
      for (const r of results.slice(1)) assert.equal(r.scores.keyword, 0);
    });

    test('keyword alone brings in a memory the semantic pool leaves out', async () => {
      // More memories closer in meaning to the query than the semantic channel returns
      // (BUDGETS.low.pool = 40): the password can only come in through the keyword channel,
      // so this fails if keyword hits stop reaching fusion (in a bank smaller than the pool
      // every memory is a semantic candidate anyway).
      const bank = 'ch-keyword-pool';
      const weather = Array.from({ length: 60 }, (_, i) => ({
        content: `The weather on day ${i} was grey, windy and cold with rain.`,
      }));
      const target = 'The router password is zxqvbnmw, written under the desk.';
      await retain(bank, [...weather, { content: target }]);
      const results = await recall(bank, { query: 'weather zxqvbnmw', budget: 'low' });
      const hit = results.find((r) => r.text === target);
      assert.ok(hit, `the keyword-only memory is missing: ${results.length} results`);
      assert.ok(hit.scores.keyword > 0.5, `keyword ${hit.scores.keyword}`);
      const others = results.filter((r) => r.text !== target);
      assert.ok(others.length >= 10);
      // It is further in meaning than every weather memory returned: not a semantic candidate.
      for (const r of others)
        assert.ok(hit.scores.semantic < r.scores.semantic, `${r.text}: ${r.scores.semantic}`);
      const only = await recall(bank, {
        query: 'weather zxqvbnmw',
        budget: 'low',
        min_scores: { keyword: 0.5 },
      });
      assert.equal(only[0]?.text, target);
    });

    test('semantic alone: no shared word, close meaning', async () => {
      const bank = 'ch-semantic';
      await retain(bank, [...distractors, { content: 'My automobile broke down on the motorway again.' }]);
      const results = await recall(bank, { query: 'car engine trouble' });
      assert.equal(results[0]!.text, 'My automobile broke down on the motorway again.');
      assert.equal(results[0]!.scores.keyword, 0);
      assert.ok(results.every((r) => r.scores.keyword === 0));
      assert.ok(results.slice(1).every((r) => r.scores.semantic < results[0]!.scores.semantic));
    });

    test('graph alone: a memory linked to the entity the query names, and its neighbours', async () => {
      const bank = 'ch-graph';
      await retain(bank, [
        ...distractors,
        {
          content: 'She put her name on the apartment lease.',
          entities: [{ text: 'Priya', type: 'PERSON' }],
        },
        {
          content: 'They met at the climbing gym downtown.',
          entities: [
            { text: 'Priya', type: 'PERSON' },
            { text: 'Tomasz', type: 'PERSON' },
          ],
        },
        { content: 'He moved to Lisbon for work.', entities: [{ text: 'Tomasz', type: 'PERSON' }] },
      ]);
      const results = await recall(bank, { query: 'What happened with Priya?' });
      const byText = new Map(results.map((r) => [r.text, r]));
      assert.ok(results[0]!.scores.graph > 0);
      assert.ok(
        ['She put her name on the apartment lease.', 'They met at the climbing gym downtown.'].includes(
          results[0]!.text,
        ),
      );
      for (const text of [
        'She put her name on the apartment lease.',
        'They met at the climbing gym downtown.',
      ]) {
        const r = byText.get(text)!;
        assert.equal(r.scores.keyword, 0, text);
        assert.ok(r.scores.graph >= 0.99, `${text}: graph ${r.scores.graph}`);
      }
      // Tomasz is Priya's neighbour (co-mentioned): his memory comes in at a lower graph score
      // with the default (mid) budget, and not with low (no graph channel).
      const neighbour = byText.get('He moved to Lisbon for work.')!;
      assert.ok(
        neighbour.scores.graph > 0 && neighbour.scores.graph < 0.99,
        `neighbour ${neighbour.scores.graph}`,
      );
      for (const d of distractors) assert.equal(byText.get(d.content)?.scores.graph ?? 0, 0);
      const low = await recall(bank, { query: 'What happened with Priya?', budget: 'low' });
      assert.ok(low.every((r) => r.scores.graph === 0));

      const only = await recall(bank, { query: 'What happened with Priya?', min_scores: { graph: 0.99 } });
      assert.deepEqual(only.map((r) => r.text).sort(), [
        'She put her name on the apartment lease.',
        'They met at the climbing gym downtown.',
      ]);
      await configure(bank, { enable_graph_retrieval: false });
      const off = await recall(bank, { query: 'What happened with Priya?' });
      assert.ok(off.every((r) => r.scores.graph === 0));
      assert.deepEqual(
        await recall(bank, { query: 'What happened with Priya?', min_scores: { graph: 0.01 } }),
        [],
      );
    });

    test('temporal alone: the period the query names, against query_timestamp', async () => {
      const bank = 'ch-temporal';
      const items = [
        { content: 'We repainted the fence.', timestamp: '2023-01-20T10:00:00Z' },
        { content: 'I joined a choir.', timestamp: '2023-03-14T10:00:00Z' },
        { content: 'The garden flooded.', timestamp: '2023-06-02T10:00:00Z' },
        { content: 'We adopted a cat.', timestamp: '2024-02-10T10:00:00Z' },
      ];
      await retain(bank, items);
      const body = { query: 'What did I do in March 2023?', query_timestamp: '2024-03-01T00:00:00Z' };
      const results = await recall(bank, body);
      assert.equal(results[0]!.text, 'I joined a choir.');
      assert.ok(results[0]!.scores.temporal > 0);
      assert.equal(results[0]!.scores.keyword, 0);
      assert.ok(results.slice(1).every((r) => r.scores.temporal === 0));
      // Relative to query_timestamp: "last month" asked on 2024-03-01 is February 2024.
      const lastMonth = await recall(bank, {
        query: 'What happened last month?',
        query_timestamp: '2024-03-01T00:00:00Z',
      });
      assert.equal(lastMonth[0]!.text, 'We adopted a cat.');
      // temporal_window overrides the parse.
      const window = await recall(bank, {
        ...body,
        temporal_window: { start: '2023-06-01T00:00:00Z', end: '2023-06-30T00:00:00Z' },
      });
      assert.equal(window[0]!.text, 'The garden flooded.');
      await configure(bank, { enable_temporal_retrieval: false });
      const off = await recall(bank, body);
      assert.ok(off.every((r) => r.scores.temporal === 0));
      assert.deepEqual(await recall(bank, { ...body, min_scores: { temporal: 0.01 } }), []);
    });

    test('neighbour context: a turn is found by the words of the question before it', async () => {
      const bank = 'ch-context';
      const session = { session_id: 'chat-1' };
      // One request per turn, as an agent retains live: the context comes from the store.
      await retain(bank, [{ content: 'Anna: What did you bake for the fundraiser?', metadata: session }]);
      await retain(bank, [{ content: 'Ben: A lemon drizzle and two dozen scones.', metadata: session }]);
      await retain(bank, [{ content: 'Anna: Did the school hall have an oven?', metadata: session }]);
      await retain(bank, [
        { content: 'Ben: A lemon drizzle is my favourite too.', metadata: { session_id: 'chat-2' } },
      ]);
      const results = await recall(bank, { query: 'What was baked for the fundraiser?' });
      const ben = results.find((r) => r.text === 'Ben: A lemon drizzle and two dozen scones.')!;
      assert.ok(ben.scores.keyword > 0, 'indexed with the question before it');
      const other = results.find((r) => r.text === 'Ben: A lemon drizzle is my favourite too.')!;
      assert.equal(other.scores.keyword, 0, 'another conversation lends no context');
      assert.ok(results.indexOf(ben) < results.indexOf(other));
      // Items of one request without a conversation or document are not each other's context.
      await retain('ch-context-plain', [
        { content: 'Tea is grown in Assam.' },
        { content: 'The bus was late.' },
      ]);
      const plain = await recall('ch-context-plain', { query: 'Assam' });
      assert.equal(plain.find((r) => r.text === 'The bus was late.')!.scores.keyword, 0);
    });
  });
}
