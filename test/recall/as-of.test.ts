/**
 * `query_timestamp` recalls as of that day: what was said later the same day counts as known,
 * what was said on a later day does not. Conversation logs often carry a reliable day and an
 * unreliable clock time (time zones, sessions stamped after the fact), and a question asked on
 * a day is about that day's conversations too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`recall as of a day (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      const items = [
        { content: 'I walked the dog along the river in the morning.', timestamp: '2024-03-15T08:00:00Z' },
        { content: 'I walked the dog to the park in the evening.', timestamp: '2024-03-15T21:30:00Z' },
        { content: 'I walked the dog on the beach the next day.', timestamp: '2024-03-16T00:30:00Z' },
        { content: 'I walked the dog in the snow last winter.', timestamp: '2024-01-10T09:00:00Z' },
      ];
      assert.equal((await t.call('POST', bankPath('as-of', '/memories'), { body: { items } })).status, 200);
    });
    after(() => t.close());

    test('memories said later on the query day are known; the next day is not', async () => {
      const r = await t.call('POST', bankPath('as-of', '/memories/recall'), {
        body: { query: 'walked the dog', query_timestamp: '2024-03-15T12:00:00Z' },
      });
      assert.equal(r.status, 200);
      const texts = r.body.results.map((x: { text: string }) => x.text).sort();
      assert.deepEqual(texts, [
        'I walked the dog along the river in the morning.',
        'I walked the dog in the snow last winter.',
        'I walked the dog to the park in the evening.',
      ]);
    });

    test('a query_timestamp at the very end of a day still excludes the next one', async () => {
      const r = await t.call('POST', bankPath('as-of', '/memories/recall'), {
        body: { query: 'walked the dog', query_timestamp: '2024-03-15T23:59:59.999Z' },
      });
      const texts = r.body.results.map((x: { text: string }) => x.text);
      assert.equal(texts.length, 3);
      assert.ok(!texts.includes('I walked the dog on the beach the next day.'));
    });
  });
}
