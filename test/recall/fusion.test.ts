/** Reciprocal rank fusion as documented, and the order recall returns with and without the reranker. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fuse, RRF_K } from '../../src/core/recall/fuse.js';
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

test('fuse: score = sum of weight / (k + rank), normalised by the best achievable', () => {
  const fused = fuse([
    { channel: 'keyword', weight: 1, ids: ['a', 'b', 'c'] },
    { channel: 'semantic', weight: 0.5, ids: ['b', 'd'] },
  ]);
  const best = 1 / (RRF_K + 1) + 0.5 / (RRF_K + 1);
  const expected = new Map([
    ['a', 1 / (RRF_K + 1) / best],
    ['b', (1 / (RRF_K + 2) + 0.5 / (RRF_K + 1)) / best],
    ['c', 1 / (RRF_K + 3) / best],
    ['d', 0.5 / (RRF_K + 2) / best],
  ]);
  assert.deepEqual(
    fused.map((f) => f.id),
    ['b', 'a', 'c', 'd'],
  );
  for (const f of fused) assert.ok(Math.abs(f.score - expected.get(f.id)!) < 1e-12, f.id);
  // A memory every channel ranks first scores exactly 1.
  assert.equal(
    fuse([
      { channel: 'x', weight: 2, ids: ['z'] },
      { channel: 'y', weight: 1, ids: ['z'] },
    ])[0]!.score,
    1,
  );
});

test('fuse: ties keep the order of first appearance; empty channels do not count', () => {
  const fused = fuse([
    { channel: 'keyword', weight: 1, ids: ['a', 'b'] },
    { channel: 'semantic', weight: 1, ids: ['b', 'a'] },
    { channel: 'graph', weight: 1, ids: [] },
  ]);
  assert.deepEqual(
    fused.map((f) => f.id),
    ['a', 'b'],
  );
  assert.equal(fused[0]!.score, fused[1]!.score);
  // Normalised over the two channels that returned something.
  assert.ok(Math.abs(fused[0]!.score - (1 / 61 + 1 / 62) / (2 / 61)) < 1e-12);
  assert.deepEqual(fuse([]), []);
});

for (const engine of ENGINES) {
  describe(`recall order (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const items = [
      { content: 'Caroline: I signed up for a pottery class on Tuesdays.' },
      { content: 'Melanie: My pottery bowl cracked in the kiln.' },
      { content: 'Caroline: Clay and glaze are expensive these days.' },
      { content: 'Melanie: We went camping by the lake.' },
      { content: 'Caroline: Did you like the class?' },
    ];

    test('with reranking off, results are in fused order and final is the fused score', async () => {
      const bank = 'order-fused';
      await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      await t.call('PATCH', bankPath(bank, '/config'), { body: { updates: { enable_reranking: false } } });
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'pottery class' },
      });
      const results = r.body.results as { text: string; scores: Scores }[];
      assert.equal(results.length, items.length);
      for (const x of results) {
        assert.equal(x.scores.reranker, 0);
        assert.ok(x.scores.final > 0 && x.scores.final <= 1);
      }
      for (let i = 1; i < results.length; i++)
        assert.ok(results[i - 1]!.scores.final >= results[i]!.scores.final);
      // First in both keyword and semantic lists: the only memory with both words.
      assert.equal(results[0]!.text, 'Caroline: I signed up for a pottery class on Tuesdays.');
      // Found by keyword (one word) beats found by semantic only, at the channel weights.
      const keywordHits = results.filter((x) => x.scores.keyword > 0).map((x) => x.text);
      const semanticOnly = results.filter((x) => x.scores.keyword === 0).map((x) => x.text);
      assert.ok(keywordHits.length >= 2 && semanticOnly.length >= 1);
      assert.deepEqual(
        results.slice(0, keywordHits.length).map((x) => x.text),
        keywordHits,
      );
    });

    test('with reranking on, final is the reranker score, in [0, 1], in order', async () => {
      const bank = 'order-reranked';
      await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'What did Caroline say about the pottery class?' },
      });
      const results = r.body.results as { text: string; scores: Scores }[];
      for (const x of results) {
        assert.equal(x.scores.final, x.scores.reranker);
        assert.ok(x.scores.final > 0 && x.scores.final <= 1);
      }
      for (let i = 1; i < results.length; i++)
        assert.ok(results[i - 1]!.scores.final >= results[i]!.scores.final);
      assert.equal(results[0]!.text, 'Caroline: I signed up for a pottery class on Tuesdays.');
      // The question Caroline asks holds no fact: below her statement about the class.
      const texts = results.map((x) => x.text);
      assert.ok(
        texts.indexOf('Caroline: Did you like the class?') >
          texts.indexOf('Caroline: I signed up for a pottery class on Tuesdays.'),
      );
      // Same request, same answer.
      const again = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'What did Caroline say about the pottery class?' },
      });
      assert.deepEqual(again.body.results, r.body.results);
    });
  });
}
