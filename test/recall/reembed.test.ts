import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { createOpenAIEmbedder } from '../../src/embed/openai.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

for (const engine of ENGINES) {
  describe(`changing the embedder re-embeds a bank (${engine})`, () => {
    /** The server as first started (closing it closes the database); `t` is the one running now. */
    let first: TestApp;
    let t: TestApp;
    let fake: FakeOpenAI;
    before(async () => {
      first = t = await testApp(engine);
      fake = await startFakeOpenAI({ dimensions: 16 });
    });
    after(async () => {
      await first.close();
      await fake.close();
    });

    const recall = async (query: string) => {
      const r = await t.call('POST', bankPath('switch', '/memories/recall'), { body: { query } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results as { text: string; scores: { semantic: number } }[];
    };
    const reembeds = async () =>
      (
        (await t.call('GET', bankPath('switch', '/operations'))).body.items as {
          id: string;
          kind: string;
          status: string;
        }[]
      ).filter((o) => o.kind === 'reembed');

    test('stale vectors switch the semantic channel off until a queued re-embed replaces them', async () => {
      const texts = [
        'Dana keeps a zebra finch named Pip.',
        'Dana works night shifts at the bakery.',
        'Dana runs on Sundays.',
      ];
      await t.call('POST', bankPath('switch', '/memories'), {
        body: { items: texts.map((content) => ({ content })) },
      });
      assert.ok((await recall('zebra finch'))[0]!.scores.semantic > 0, 'the local vectors answer at first');
      assert.deepEqual(await reembeds(), []);

      // The operator configures an embeddings API and restarts: the bank's vectors are now another model's.
      t = await first.reconfigured({
        embedder: createOpenAIEmbedder({ url: fake.url, model: 'fake-embed', dimensions: 16 }),
      });
      const during = await recall('zebra finch');
      assert.equal(during[0]?.text, texts[0], 'keyword search still finds it');
      assert.ok(
        during.every((r) => r.scores.semantic === 0),
        'no similarity across embedders',
      );
      assert.equal((await reembeds()).length, 1, 'recall queued a re-embed');

      // Retain goes on (new memories get new vectors) and does not queue a second re-embed.
      const more = await t.call('POST', bankPath('switch', '/memories'), {
        body: { items: [{ content: 'Dana adopted a second finch.' }] },
      });
      assert.equal(more.status, 200);
      const [op] = await reembeds();
      assert.equal((await reembeds()).length, 1);

      const before = fake.requests.length;
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        await until(
          async () => (await t.call('GET', bankPath('switch', `/operations/${op!.id}`))).body,
          (o) => o.status === 'completed',
          60_000,
        );
      } finally {
        await worker.stop();
      }
      const embedded = fake.requests.slice(before).flatMap((r) => (r.body as { input: string[] }).input);
      for (const text of [...texts, 'Dana adopted a second finch.']) assert.ok(embedded.includes(text), text);

      const afterwards = await recall('zebra finch');
      assert.equal(afterwards[0]?.text, texts[0]);
      assert.ok(afterwards[0]!.scores.semantic > 0, 'the semantic channel is back, on the new vectors');
      assert.equal((await reembeds()).length, 1, 'nothing more to re-embed');
    });
  });
}
