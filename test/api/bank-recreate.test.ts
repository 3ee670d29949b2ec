/**
 * A bank deleted and created again under the same id starts empty: nothing of the old one
 * (memories, entities, documents, observations, directives, config, name, operations, cached
 * Recall answers, idempotent replies) comes back through any route.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const BANK = 'phoenix@example.com';
const ITEMS = {
  items: [
    {
      content: 'Alice adopted a beagle named Pepper in Lisbon.',
      tags: ['pets'],
      document_id: 'journal',
      entities: [{ text: 'Pepper', type: 'ANIMAL' }],
    },
    { content: 'Alice drinks green tea every morning.', document_id: 'journal' },
    { content: 'Alice drinks green tea every morning.' },
  ],
};

for (const engine of ENGINES) {
  describe(`a bank deleted and created again starts empty (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const ok = async (method: string, rest: string, opts: Parameters<TestApp['call']>[2] = {}) => {
      const r = await t.call(method, bankPath(BANK, rest), opts);
      assert.ok(
        r.status >= 200 && r.status < 300,
        `${method} ${rest}: ${r.status} ${JSON.stringify(r.body)}`,
      );
      return r.body;
    };
    const retainOnce = () =>
      ok('POST', '/memories', { body: ITEMS, headers: { 'idempotency-key': 'phoenix-1' } });
    const recall = () =>
      ok('POST', '/memories/recall', { body: { query: 'What is the name of the beagle?' } });

    /** Everything the routes show of the bank, as counts and values. */
    const state = async () => ({
      memories: (await ok('GET', '/memories?limit=100')).items.length,
      observations: (await ok('GET', '/memories?type=observation')).items.length,
      entities: (await ok('GET', '/entities')).items.length,
      documents: (await ok('GET', '/documents')).items.length,
      directives: (await ok('GET', '/directives')).items.length,
      operations: (await ok('GET', '/operations')).items.length,
      overrides: (await ok('GET', '/config')).overrides,
      name: (await ok('GET', '/profile')).name,
      mission: (await ok('GET', '/profile')).mission,
      recalled: (await recall()).results.map((r: { text: string }) => r.text) as string[],
    });

    test('nothing of the old bank comes back', async () => {
      await ok('PUT', '', { body: { name: 'Phoenix', mission: 'Remember Alice.' } });
      await ok('PATCH', '/config', { body: { updates: { disposition_empathy: 5 } } });
      await ok('POST', '/directives', { body: { name: 'tone', text: 'Answer warmly.' } });
      const first = await retainOnce();
      assert.equal(first.memory_ids.length, 3);
      const consolidated = await consolidateBank(t.services, 'default', BANK);
      assert.ok(consolidated.observations_created >= 1, JSON.stringify(consolidated));
      const full = await state();
      assert.ok(full.memories >= 4 && full.observations >= 1 && full.entities >= 1, JSON.stringify(full));
      assert.deepEqual([full.documents, full.directives, full.name], [1, 1, 'Phoenix']);
      assert.ok(full.operations >= 1, 'Retain queued a consolidation');
      assert.deepEqual(full.overrides, { disposition_empathy: 5 });
      assert.ok(full.recalled.some((text: string) => text.includes('Pepper')));
      const cached = t.services.recallCache?.size ?? 0;
      assert.deepEqual(await recall(), await recall(), 'the answer is cached');

      await ok('DELETE', '');
      assert.equal((await t.call('GET', bankPath(BANK, '/profile'))).status, 404);
      await ok('PUT', '', {});
      const empty = await state();
      assert.deepEqual(empty, {
        memories: 0,
        observations: 0,
        entities: 0,
        documents: 0,
        directives: 0,
        operations: 0,
        overrides: {},
        name: empty.name === 'Phoenix' ? 'old name came back' : empty.name,
        mission: empty.mission === 'Remember Alice.' ? 'old mission came back' : empty.mission,
        recalled: [],
      });
      assert.ok(cached >= 1);

      // The same Retain under the same Idempotency-Key is new work in the new bank, not a
      // replay of the old bank's reply (whose memory ids no longer exist).
      const again = await retainOnce();
      assert.equal(again.memory_ids.length, 3);
      for (const id of again.memory_ids)
        assert.ok(!first.memory_ids.includes(id), 'a replayed id of the old bank');
      const after = await ok('GET', '/memories?limit=100');
      assert.deepEqual(
        after.items.map((m: { id: string }) => m.id).sort(),
        [...again.memory_ids].sort(),
        'only the new memories',
      );
      const entities = (await ok('GET', '/entities')).items as { name: string; mention_count?: number }[];
      const pepper = entities.find((e) => e.name === 'Pepper');
      assert.ok(pepper, JSON.stringify(entities));
      if (pepper.mention_count !== undefined) assert.equal(pepper.mention_count, 1, 'counts start again');
    });
  });
}
