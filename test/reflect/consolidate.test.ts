import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

interface Observation {
  id: string;
  text: string;
  tags: string[];
  metadata: {
    proof_count: number;
    source_memory_ids: string[];
    contradicted: boolean;
    contradicting_memory_ids: string[];
  };
}

for (const engine of ENGINES) {
  describe(`consolidation into observations (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const retain = async (
      bank: string,
      items: { content: string; tags?: string[]; timestamp?: string }[],
    ) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.memory_ids as string[];
    };
    /** Consolidated observations (habits retained as type `observation` carry no proof count). */
    const observations = async (bank: string): Promise<Observation[]> =>
      (await t.call('GET', bankPath(bank, '/memories?type=observation'))).body.items.filter(
        (m: Observation) => m.metadata.proof_count !== undefined,
      );
    const consolidate = (bank: string) => consolidateBank(t.services, 'default', bank);

    // First: the worker runs operations oldest first, and every earlier test's Retain queued one.
    test('retain queues a consolidation that a worker runs; the endpoint reuses a waiting one', async () => {
      const bank = 'queued';
      await retain(bank, [
        { content: 'Carol drinks green tea every morning.' },
        { content: 'Carol drinks green tea every morning.' },
      ]);
      const asked = await t.call('POST', bankPath(bank, '/consolidate'));
      assert.equal(asked.status, 200);
      assert.equal(asked.body.deduplicated, true, 'retain queued one already');
      assert.equal(asked.body.operation.kind, 'consolidate');
      assert.equal(asked.body.operation.status, 'pending');
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        const done = await until(
          () => t.call('GET', bankPath(bank, `/operations/${asked.body.operation_id}`)),
          (r) => r.body.status === 'completed',
          120_000, // a first consolidation scans the bank; slow on a busy machine
        );
        assert.equal(done.body.memories_created, 1);
      } finally {
        await worker.stop();
      }
      assert.equal((await observations(bank))[0]?.metadata.proof_count, 2);
      assert.equal((await t.call('POST', bankPath('nobody', '/consolidate'))).status, 404);

      // A bank that turned automatic observations off gets no run after Retain, only on demand.
      await retain('manual', [{ content: 'Erin paints on Sundays.' }]);
      await t.call('PATCH', bankPath('manual', '/config'), {
        body: { updates: { enable_observations: false } },
      });
      const ops = async () => (await t.call('GET', bankPath('manual', '/operations'))).body.items.length;
      const queuedBefore = await ops();
      await retain('manual', [{ content: 'Erin paints on Sundays.' }]);
      assert.equal(await ops(), queuedBefore);
      assert.equal((await t.call('POST', bankPath('manual', '/consolidate'))).status, 200);
    });

    test('duplicates merge into one observation with their proof count and sources; runs are incremental and idempotent', async () => {
      const bank = 'dupes';
      const dupes = await retain(bank, [
        { content: 'Alice works as a nurse at Mercy Hospital.', timestamp: '2024-01-10T09:00:00Z' },
        { content: 'Alice adopted a beagle named Pepper.' },
        { content: 'alice works as a nurse at mercy hospital', timestamp: '2024-02-10T09:00:00Z' },
        { content: 'The weather in Lisbon was sunny all week.' },
        { content: 'Alice works as a nurse at Mercy Hospital', timestamp: '2024-03-10T09:00:00Z' },
      ]);
      const nurse = [dupes[0]!, dupes[2]!, dupes[4]!];
      const first = await consolidate(bank);
      assert.equal(first.processed, 5);
      assert.equal(first.observations_created, 1);
      const [obs, ...rest] = await observations(bank);
      assert.equal(rest.length, 0);
      assert.match(obs!.text, /nurse at Mercy Hospital/i);
      assert.equal(obs!.metadata.proof_count, 3);
      assert.deepEqual([...obs!.metadata.source_memory_ids].sort(), [...nurse].sort());
      assert.equal(obs!.metadata.contradicted, false);
      const detail = (await t.services.store.observationDetails('default', bank, [obs!.id])).get(obs!.id);
      assert.equal(detail?.proof_count, 3);

      // Nothing new: nothing changes.
      const again = await consolidate(bank);
      assert.deepEqual(again, {
        processed: 0,
        observations_created: 0,
        observations_updated: 0,
        contradictions: 0,
        pruned: 0,
      });
      assert.deepEqual(await observations(bank), [obs]);

      // Only the new memory is looked at, and it joins the observation.
      const [fourth] = await retain(bank, [{ content: 'Alice works as a nurse at Mercy Hospital!' }]);
      const third = await consolidate(bank);
      assert.equal(third.processed, 1);
      assert.equal(third.observations_updated, 1);
      const [grown] = await observations(bank);
      assert.equal(grown!.id, obs!.id);
      assert.equal(grown!.metadata.proof_count, 4);
      assert.ok(grown!.metadata.source_memory_ids.includes(fourth!));

      // Observations are recallable by type.
      const recalled = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'Where does Alice work?', types: ['observation'] },
      });
      assert.equal(recalled.status, 200);
      assert.deepEqual(
        recalled.body.results.map((r: { id: string }) => r.id),
        [obs!.id],
      );
    });

    test('a contradiction is marked, not silently kept beside the observation', async () => {
      const bank = 'conflict';
      await retain(bank, [
        { content: 'Alice works as a nurse at Mercy Hospital.' },
        { content: 'Alice works as a nurse at Mercy Hospital.' },
      ]);
      await consolidate(bank);
      const [quit] = await retain(bank, [{ content: 'Alice no longer works at Mercy Hospital.' }]);
      const run = await consolidate(bank);
      assert.equal(run.contradictions, 1);
      const all = await observations(bank);
      assert.equal(all.length, 1);
      assert.equal(all[0]!.metadata.contradicted, true);
      assert.deepEqual(all[0]!.metadata.contradicting_memory_ids, [quit]);
      assert.equal(all[0]!.metadata.proof_count, 2);
    });

    test('two memories that conflict form an observation that says so', async () => {
      const bank = 'moved';
      const [paris] = await retain(bank, [
        { content: 'Alice lives in Paris.', timestamp: '2024-01-01T00:00:00Z' },
      ]);
      const [berlin] = await retain(bank, [
        { content: 'Alice lives in Berlin.', timestamp: '2024-06-01T00:00:00Z' },
      ]);
      await consolidate(bank);
      const [obs, ...rest] = await observations(bank);
      assert.equal(rest.length, 0);
      assert.equal(obs!.text, 'Alice lives in Berlin.');
      assert.deepEqual(obs!.metadata.source_memory_ids, [berlin]);
      assert.deepEqual(obs!.metadata.contradicting_memory_ids, [paris]);
      assert.equal(obs!.metadata.contradicted, true);
    });

    test('new evidence that refines an observation rewrites it; tags keep observations apart', async () => {
      const bank = 'refine';
      await retain(bank, [
        { content: 'Alice adopted a beagle named Pepper.' },
        { content: 'Alice adopted a beagle named Pepper' },
      ]);
      await retain(bank, [
        { content: 'Alice adopted a beagle named Pepper.', tags: ['private'] },
        { content: 'Alice adopted a beagle named Pepper.', tags: ['private'] },
      ]);
      await consolidate(bank);
      const before = await observations(bank);
      assert.equal(before.length, 2, 'one observation per tag set');
      const untagged = before.find((o) => o.tags.length === 0)!;
      await retain(bank, [{ content: 'Alice adopted a beagle named Pepper from a shelter in May 2024.' }]);
      await consolidate(bank);
      const after = await observations(bank);
      const rewritten = after.find((o) => o.id === untagged.id)!;
      assert.equal(rewritten.text, 'Alice adopted a beagle named Pepper from a shelter in May 2024.');
      assert.equal(rewritten.metadata.proof_count, 3);
      assert.deepEqual(rewritten.tags, []);
      assert.equal(after.find((o) => o.tags.length > 0)!.metadata.proof_count, 2);
    });

    test('deleting a memory behind an observation deletes it; what is left is consolidated again', async () => {
      const bank = 'pruned';
      const ids = await retain(bank, [
        { content: 'Bob plays the cello every Sunday.' },
        { content: 'Bob plays the cello every Sunday' },
        { content: 'Every Sunday Bob plays the cello.' },
      ]);
      await consolidate(bank);
      assert.equal((await observations(bank))[0]!.metadata.proof_count, 3);
      // A forget takes the observation with it (it said what the memory said), and marks the
      // other memories behind it for consolidation: the next run makes it again from them.
      assert.equal((await t.call('DELETE', bankPath(bank, `/memories/${ids[0]}`))).status, 200);
      assert.deepEqual(await observations(bank), []);
      await consolidate(bank);
      const [again] = await observations(bank);
      assert.equal(again!.metadata.proof_count, 2);
      // One memory alone makes no observation.
      await t.call('DELETE', bankPath(bank, `/memories/${ids[1]}`));
      await consolidate(bank);
      assert.deepEqual(await observations(bank), []);
    });

    test('with a language model, the model writes the observation text', async () => {
      const bank = 'modelled';
      const fake = await startFakeOpenAI();
      const [a, b] = await retain(bank, [
        { content: 'Dana said she runs 5k every Saturday.' },
        { content: 'Dana runs five kilometres on Saturdays.' },
      ]);
      fake.respond((body) => {
        const prompt = body.messages.at(-1).content as string;
        return prompt.includes('[m1]')
          ? {
              content: JSON.stringify({
                action: 'create',
                text: 'Dana runs 5 km every Saturday.',
                supports: ['NEW', 'm1'],
              }),
            }
          : { content: '{"action": "none"}' };
      });
      await t.call('PATCH', bankPath(bank, '/config'), {
        body: { updates: { observations_mission: 'Track exercise habits.' } },
      });
      // The server restarted with a model configured.
      const modelled = await t.reconfigured({
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
      });
      try {
        const run = await consolidateBank(modelled.services, 'default', bank);
        assert.equal(run.observations_created, 1);
        const [obs] = await observations(bank);
        assert.equal(obs!.text, 'Dana runs 5 km every Saturday.');
        assert.deepEqual([...obs!.metadata.source_memory_ids].sort(), [a, b].sort());
        const asked = fake.requests.at(-1)!.body;
        assert.equal(asked.response_format.type, 'json_schema');
        assert.match(asked.messages[0].content, /never keep two conflicting statements silently/i);
        assert.match(asked.messages[0].content, /Track exercise habits\./);
      } finally {
        await modelled.close();
        await fake.close();
      }
    });
  });
}
