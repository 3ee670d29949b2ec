/**
 * Keyword search in the process, as a user meets it: once a bank has been searched often enough
 * its Recalls' keyword channel is answered from the process's copy of its postings, and still a
 * Retain, a forget or a tagged Recall right after gives what the database holds at that moment.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`keyword copies through the API (${engine})`, () => {
    let t: TestApp;
    const bank = 'copies@example.com';
    const stats = () => t.services.store.keywordMemoryStats()!;
    const recall = async (query: string, extra: Record<string, unknown> = {}) => {
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), { body: { query, ...extra } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body as { results: { id: string; text: string }[] }).results;
    };
    const retain = async (items: unknown[]) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };

    before(async () => {
      // No answer cache: every Recall is computed.
      t = await testApp(engine, { recallCacheSize: 0 });
      await retain([
        { content: 'Ada keeps bees on the roof of her flat' },
        { content: 'Ada sold honey at the Saturday market', tags: ['market'] },
        { content: 'Ada repaired her bicycle chain on Sunday' },
      ]);
    });
    after(() => t.close());

    test('a loaded copy answers, and a Retain, a forget and a tag filter right after are exact', async () => {
      // Searched until the bank is loaded in the background (8 searches at one version).
      for (let i = 0; i < 8; i++) await recall('honey market');
      for (let waited = 0; stats().banks === 0 && waited < 10_000; waited += 20) await sleep(20);
      assert.equal(stats().banks, 1, 'the bank was copied');
      const hits = stats().hits;
      const honey = (await recall('honey market'))[0]!;
      assert.match(honey.text, /honey/);
      assert.equal(stats().hits, hits + 1, 'answered from the copy');
      const tagged = await recall('honey market', { tags: ['market'], tags_match: 'any_strict' });
      assert.deepEqual(
        tagged.map((m) => m.id),
        [honey.id],
        'only the tagged memory',
      );
      assert.equal(stats().hits, hits + 2, 'a tagged Recall too');

      await retain([{ content: 'Ada sells beeswax candles at the winter fair' }]);
      assert.match((await recall('beeswax candles'))[0]!.text, /beeswax/, 'the new memory, at once');

      const r = await t.call('DELETE', bankPath(bank, `/memories/${honey.id}`));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(!(await recall('honey market')).some((m) => m.id === honey.id), 'forgotten at once');
    });
  });
}
