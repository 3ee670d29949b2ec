/**
 * A calendar date the query names ("on 9 November, 2022") is precise evidence and counts twice as
 * much in the reranker as a time relative to when the question is asked ("yesterday"), which
 * people use loosely.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const ON_THE_DAY = 'Nate: I tried out some cooking, look at this homemade coconut ice cream!';
const WORDY = 'Nate: My favourite dish to make is pasta.';

for (const engine of ENGINES) {
  describe(`absolute and relative time ranges (${engine})`, () => {
    let t: TestApp;
    const recall = async (body: Record<string, unknown>) => {
      const r = await t.call('POST', bankPath('absolute', '/memories/recall'), { body });
      assert.equal(r.status, 200);
      return r.body.results as { text: string; scores: { reranker: number; temporal: number } }[];
    };
    /** How far the memory of that day is ahead of the wordy one, in reranker score. */
    const lead = (results: Awaited<ReturnType<typeof recall>>) =>
      results.find((r) => r.text === ON_THE_DAY)!.scores.reranker -
      results.find((r) => r.text === WORDY)!.scores.reranker;
    before(async () => {
      t = await testApp(engine);
      const items = [
        { content: ON_THE_DAY, timestamp: '2022-11-09T15:00:00Z' },
        { content: WORDY, timestamp: '2022-10-01T15:00:00Z' },
      ];
      assert.equal(
        (await t.call('POST', bankPath('absolute', '/memories'), { body: { items } })).status,
        200,
      );
    });
    after(() => t.close());

    const relative = () =>
      recall({ query: 'What dish did Nate make yesterday?', query_timestamp: '2022-11-10T12:00:00Z' });

    test('the same day named by date counts more than named relative to the question', async () => {
      const dated = await recall({ query: 'What dish did Nate make on 9 November, 2022?' });
      const loose = await relative();
      // Both queries put the day's memory in their window, equally.
      for (const rs of [dated, loose])
        assert.ok(rs.find((r) => r.text === ON_THE_DAY)!.scores.temporal > 0.5);
      assert.ok(lead(dated) > lead(loose) + 0.05, `${lead(dated)} vs ${lead(loose)}`);
    });

    test('a temporal_window given by the client is precise too', async () => {
      const given = await recall({
        query: 'What dish did Nate make yesterday?',
        temporal_window: { start: '2022-11-09T00:00:00Z', end: '2022-11-10T00:00:00Z' },
      });
      const loose = await relative();
      assert.ok(lead(given) > lead(loose) + 0.05, `${lead(given)} vs ${lead(loose)}`);
    });
  });
}
