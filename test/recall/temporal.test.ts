/**
 * Temporal recall on a table of expressions, parsed against a fixed `query_timestamp`: the
 * memories the query's period covers (by when they were said) get a temporal score, the rest 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

/** Friday 15 March 2024, noon UTC. */
const NOW = '2024-03-15T12:00:00Z';

// Texts share no word with the queries and carry no date of their own.
const MEMORIES: Record<string, string> = {
  A: '2024-03-15T08:00:00Z',
  B: '2024-03-14T18:00:00Z',
  C: '2024-03-06T10:00:00Z',
  D: '2024-02-10T10:00:00Z',
  E: '2023-12-25T10:00:00Z',
  F: '2023-07-20T10:00:00Z',
  G: '2022-05-05T10:00:00Z',
  H: '2019-09-01T10:00:00Z',
};
const text = (k: string) => `Memory ${k.toLowerCase()}${k.toLowerCase()} about nothing much.`;

/** [query, memories with a temporal score]. */
const TABLE: [string, string[]][] = [
  ['What happened today?', ['A']],
  ['What happened yesterday?', ['B']],
  ['What happened last week?', ['C']],
  ['What happened last month?', ['D']],
  ['What happened last Christmas?', ['E']],
  ['What happened last summer?', ['F']],
  ['What happened in July 2023?', ['F']],
  ['What happened in 2022?', ['G']],
  ['What happened since January?', ['A', 'B', 'C', 'D']],
  ['What happened before 2020?', ['H']],
  ['What happened in the past two weeks?', ['A', 'B', 'C']],
  ['What happened between May 2022 and December 2023?', ['E', 'F', 'G']],
  ['What happened in the 2010s?', ['H']],
  // Anchored on an event the bank does not know: no period, no temporal score.
  ['What happened two weeks before the wedding?', []],
  ['What happened?', []],
];

for (const engine of ENGINES) {
  describe(`temporal recall table (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      const r = await t.call('POST', bankPath('when', '/memories'), {
        body: { items: Object.entries(MEMORIES).map(([k, timestamp]) => ({ content: text(k), timestamp })) },
      });
      assert.equal(r.status, 200);
    });
    after(() => t.close());

    for (const [query, expected] of TABLE) {
      test(`${query} -> ${expected.join(', ') || 'none'}`, async () => {
        const r = await t.call('POST', bankPath('when', '/memories/recall'), {
          body: { query, query_timestamp: NOW },
        });
        assert.equal(r.status, 200);
        const results = r.body.results as { text: string; scores: { temporal: number } }[];
        const dated = results.filter((x) => x.scores.temporal > 0).map((x) => x.text);
        assert.deepEqual(dated.sort(), expected.map(text).sort());
        // The memories of the period come first.
        assert.deepEqual(
          results
            .slice(0, expected.length)
            .map((x) => x.text)
            .sort(),
          expected.map(text).sort(),
        );
      });
    }

    test('a time relative to an event: the event is found in memory and the window set around it', async () => {
      const said = {
        wedding: 'We finally got married, the wedding in Napa was perfect.',
        suit: 'I picked up the suit from the tailor today.',
        hike: 'Went hiking up Mount Tam.',
        job: 'First day at the new job.',
      };
      const r = await t.call('POST', bankPath('anchored', '/memories'), {
        body: {
          items: [
            { content: said.wedding, timestamp: '2023-06-30T18:00:00Z' },
            { content: said.suit, timestamp: '2023-06-16T10:00:00Z' },
            { content: said.hike, timestamp: '2023-05-01T10:00:00Z' },
            { content: said.job, timestamp: '2023-08-01T10:00:00Z' },
          ],
        },
      });
      assert.equal(r.status, 200);
      const ask = async (query: string) =>
        (
          await t.call('POST', bankPath('anchored', '/memories/recall'), {
            body: { query, query_timestamp: NOW },
          })
        ).body.results as { text: string; scores: { temporal: number } }[];
      const before = await ask('What did I do two weeks before the wedding?');
      assert.deepEqual(
        before.filter((x) => x.scores.temporal > 0).map((x) => x.text),
        [said.suit],
      );
      const rank = (text: string) => {
        const i = before.findIndex((x) => x.text === text);
        return i < 0 ? Number.POSITIVE_INFINITY : i;
      };
      assert.ok(rank(said.suit) <= 1, 'the suit comes first or right after the wedding itself');
      assert.ok(rank(said.suit) < rank(said.hike) && rank(said.suit) < rank(said.job));
      const after = await ask('What happened a month after the wedding?');
      assert.deepEqual(
        after.filter((x) => x.scores.temporal > 0).map((x) => x.text),
        [said.job],
      );
    });

    test('what a memory tells of counts too, however long its span, found through the indexes', async () => {
      const said = {
        year: 'Back in 2019 I lived in Lisbon.',
        decade: 'In the 90s I skated every weekend.',
        day: 'Yesterday I visited the aquarium.',
      };
      const r = await t.call('POST', bankPath('spans', '/memories'), {
        body: {
          items: [
            { content: said.year, timestamp: '2024-01-10T10:00:00Z' },
            { content: said.decade, timestamp: '2024-01-11T10:00:00Z' },
            { content: said.day, timestamp: '2024-03-10T10:00:00Z' },
          ],
        },
      });
      assert.equal(r.status, 200);
      const dated = async (query: string) =>
        (
          (
            await t.call('POST', bankPath('spans', '/memories/recall'), {
              body: { query, query_timestamp: NOW },
            })
          ).body.results as { text: string; scores: { temporal: number } }[]
        )
          .filter((x) => x.scores.temporal > 0)
          .map((x) => x.text)
          .sort();
      assert.deepEqual(await dated('What happened in June 2019?'), [said.year]);
      assert.deepEqual(await dated('What happened in 1995?'), [said.decade]);
      assert.deepEqual(await dated('What happened on March 9, 2024?'), [said.day]);
      assert.deepEqual(await dated('What happened in 2005?'), []);
    });

    test('query_timestamp is also the "as of" time: later memories are not recalled', async () => {
      const r = await t.call('POST', bankPath('when', '/memories/recall'), {
        body: { query: 'What happened last month?', query_timestamp: '2024-03-01T00:00:00Z' },
      });
      const texts = (r.body.results as { text: string }[]).map((x) => x.text);
      assert.ok(!texts.includes(text('A')) && !texts.includes(text('C')));
      assert.ok(texts.includes(text('D')));
    });
  });
}
