/** `min_scores` drops exactly the results under each stage's floor, and keeps the order of the rest. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STAGES } from '../../src/core/recall/recall.js';
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

type Result = { id: string; text: string; scores: Scores };

for (const engine of ENGINES) {
  describe(`min_scores (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      await t.call('POST', bankPath('floors', '/memories'), {
        body: {
          items: [
            {
              content: 'Nina: I ran the city marathon in May.',
              timestamp: '2024-05-12T09:00:00Z',
              entities: [{ text: 'Nina', type: 'PERSON' }],
            },
            {
              content: 'Omar: Nina trains for races every morning.',
              timestamp: '2024-04-02T09:00:00Z',
              entities: [{ text: 'Nina', type: 'PERSON' }],
            },
            { content: 'Omar: My knee hurts after the long run.', timestamp: '2024-05-20T09:00:00Z' },
            { content: 'Nina: We baked bread on Sunday.', timestamp: '2024-01-07T09:00:00Z' },
            { content: 'Omar: Which shoes do you run in?', timestamp: '2024-05-03T09:00:00Z' },
            { content: 'The city closed the bridge for repairs.', timestamp: '2023-11-30T09:00:00Z' },
          ],
        },
      });
    });
    after(() => t.close());

    const recall = async (body: Record<string, unknown>): Promise<Result[]> => {
      const r = await t.call('POST', bankPath('floors', '/memories/recall'), { body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results;
    };
    const query = { query: 'Did Nina run a race in May 2024?', query_timestamp: '2024-06-01T00:00:00Z' };

    test('each stage: a floor between two scores drops exactly those below it', async () => {
      const all = await recall(query);
      assert.ok(all.length >= 5);
      for (const stage of STAGES) {
        const values = [...new Set(all.map((r) => r.scores[stage]!))].sort((a, b) => a - b);
        assert.ok(values.length >= 2, `${stage} should separate the memories: ${values}`);
        // Halfway between the two middle distinct values: some kept, some dropped.
        const mid = Math.floor(values.length / 2);
        const floor = (values[mid - 1]! + values[mid]!) / 2;
        const kept = await recall({ ...query, min_scores: { [stage]: floor } });
        const expected = all.filter((r) => r.scores[stage]! >= floor);
        assert.ok(expected.length > 0 && expected.length < all.length, stage);
        assert.deepEqual(
          kept.map((r) => r.id),
          expected.map((r) => r.id),
          stage,
        );
      }
    });

    test('floors combine, a floor of 0 drops nothing, and an unreachable one drops all', async () => {
      const all = await recall(query);
      assert.deepEqual(await recall({ ...query, min_scores: { semantic: -1, keyword: 0 } }), all);
      assert.deepEqual(await recall({ ...query, min_scores: { final: 1.01 } }), []);
      const both = await recall({ ...query, min_scores: { keyword: 0.01, temporal: 0.01 } });
      const expected = all.filter((r) => r.scores.keyword! >= 0.01 && r.scores.temporal! >= 0.01);
      assert.deepEqual(
        both.map((r) => r.id),
        expected.map((r) => r.id),
      );
      assert.ok(expected.length > 0);
    });

    test('an unknown stage is a 400', async () => {
      const r = await t.call('POST', bankPath('floors', '/memories/recall'), {
        body: { ...query, min_scores: { relevance: 0.5 } },
      });
      assert.equal(r.status, 400);
    });
  });
}
