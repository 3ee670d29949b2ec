/**
 * The same data gives the same recall on both engines: same memories, same order, same scores
 * (cosines may differ in the last reported digit: pgvector's float arithmetic, native against
 * WebAssembly). Needs MNEMO_TEST_DATABASE_URL; skipped without it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const both = ENGINES.includes('postgres');
const session = (n: number) => ({ session_id: `s${n}` });

const ITEMS = [
  {
    content: 'Caroline: I went to a support group yesterday.',
    timestamp: '2023-05-08T13:56:00Z',
    metadata: session(1),
  },
  {
    content: 'Melanie: How was it? Did you meet anyone new?',
    timestamp: '2023-05-08T13:57:00Z',
    metadata: session(1),
  },
  {
    content: 'Caroline: Yes, a counselor who runs adoption workshops.',
    timestamp: '2023-05-08T13:58:00Z',
    metadata: session(1),
  },
  {
    content: 'Melanie: I painted a sunrise over the lake last weekend.',
    timestamp: '2023-05-25T10:00:00Z',
    metadata: session(2),
  },
  {
    content: 'Caroline: That sounds calming. I started a pottery class.',
    timestamp: '2023-05-25T10:01:00Z',
    metadata: session(2),
  },
  {
    content: 'Melanie: We took the kids camping in the mountains in June.',
    timestamp: '2023-07-02T09:00:00Z',
    metadata: session(3),
    entities: [{ text: 'Melanie', type: 'PERSON' }],
  },
  {
    content: 'Caroline: My friend Priya is moving to Lisbon.',
    timestamp: '2023-07-02T09:01:00Z',
    metadata: session(3),
    entities: [
      { text: 'Priya', type: 'PERSON' },
      { text: 'Lisbon', type: 'PLACE' },
    ],
  },
  {
    content: 'The apartment lease was signed.',
    timestamp: '2023-07-10T12:00:00Z',
    entities: [{ text: 'Priya', type: 'PERSON' }],
  },
];

const QUERIES: Record<string, unknown>[] = [
  { query: 'What did Caroline do at the support group?' },
  { query: 'When did Melanie paint a sunrise?' },
  { query: 'What happened in June 2023?', query_timestamp: '2024-01-01T00:00:00Z' },
  { query: 'What happened with Priya?', budget: 'high' },
  { query: 'pottery', budget: 'low' },
  { query: 'adoption', tags: ['none'], tags_match: 'any' },
  { query: 'camping trip', min_scores: { semantic: 0.2 } },
];

describe('recall on both engines', { skip: both ? false : 'needs MNEMO_TEST_DATABASE_URL' }, () => {
  const apps: TestApp[] = [];
  before(async () => {
    for (const engine of ['pglite', 'postgres'] as const) {
      const t = await testApp(engine);
      apps.push(t);
      // One request per item, so the neighbour context comes from the store on both.
      for (const item of ITEMS) {
        const r = await t.call('POST', bankPath('same', '/memories'), { body: { items: [item] } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
    }
  });
  after(async () => {
    for (const t of apps) await t.close();
  });

  for (const body of QUERIES) {
    test(JSON.stringify(body), async () => {
      const [a, b] = await Promise.all(
        apps.map((t) => t.call('POST', bankPath('same', '/memories/recall'), { body })),
      );
      assert.equal(a!.status, 200);
      assert.equal(b!.status, 200);
      type Body = {
        body: { results: { text: string; scores: Record<string, number>; entities: string[] }[] };
      };
      const view = (r: Body) => r.body.results.map((x) => ({ text: x.text, entities: x.entities }));
      assert.ok(view(a!).length > 0);
      assert.deepEqual(view(b!), view(a!));
      assert.deepEqual(b!.body.usage, a!.body.usage);
      (a as Body).body.results.forEach((x, i) => {
        const y = (b as Body).body.results[i]!;
        for (const [stage, v] of Object.entries(x.scores)) {
          assert.ok(Math.abs(v - y.scores[stage]!) <= 2e-6, `${x.text} ${stage}: ${v} vs ${y.scores[stage]}`);
        }
      });
    });
  }
});
