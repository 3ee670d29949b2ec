/**
 * Queued work charged when queued that fails later (issue 18): an async Retain or an import is
 * charged its items, characters and given entities as it is queued. Written as the attack: a
 * tenant queues Retains that a later refusal in their slice (here the stored-memories quota)
 * fails for good. Each must give back the part it did not store, once, however many workers
 * race on the operation; and a slice that fails before its write gives back the entities it
 * extracted (a retry extracts and charges them again).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { OPERATION_UNDONE } from '../../src/core/operation-charges.js';
import { retainUndone } from '../../src/core/retain/retain-async.js';
import { buildArchive } from '../../src/core/transfer/archive.js';
import { IMPORT_DOCUMENTS, queueImport } from '../../src/core/transfer/import.js';
import { startWorker } from '../../src/jobs/worker.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { item100 as item, plusItems, queueRetain } from '../helpers/charges.js';
import { projectWithKey } from '../helpers/keys.js';
import { projectUsage, setProjectLimits } from '../helpers/project-usage.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

for (const engine of ENGINES) {
  describe(`queued work that fails gives back what it did not store (${engine})`, () => {
    let t: TestApp;
    let clock = Date.parse('2030-01-01T10:00:05Z');
    let key = '';
    const project = 'failing';
    /** The operation the first test fails, retried by the second. */
    let retried: { bank: string; id: string; before: Record<string, number> } | undefined;
    const setLimits = (limits: Record<string, number | null>) => setProjectLimits(t, project, limits);
    const usage = () => projectUsage(t, project);
    /** The stored-memories quota set to what is stored: the next memory is refused. */
    const fillStoredQuota = async () => {
      const stored = (await t.call('GET', `/v1/default/projects/${project}`)).body.usage.stored_memories;
      await setLimits({ stored_memories: stored });
    };
    const operation = async (bank: string, id: string) =>
      (await t.call('GET', me(bank, `/operations/${id}`), { token: key })).body;

    /**
     * The project's stored-memories quota spent before a worker gets to the queued operation, which
     * fails on it for good; returns the failed operation.
     */
    const failOnStoredQuota = async (bank: string, id: string) => {
      await fillStoredQuota();
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
        maxAttempts: 1,
      });
      try {
        return await until(
          () => operation(bank, id),
          (o) => o.status === 'failed',
        );
      } finally {
        await worker.stop();
        await setLimits({ stored_memories: null });
      }
    };

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      key = await projectWithKey(t, project);
      await setLimits({
        characters_per_minute: 100_000,
        characters_per_day: 100_000,
        retained_items_per_minute: 1000,
        retained_items_per_day: 1000,
        entities_per_minute: 1000,
      });
      // Something stored: the stored-memories quota is at least 1.
      const seed = await t.call('POST', me('seed', '/memories'), {
        token: key,
        body: { items: [item('seed')] },
      });
      assert.equal(seed.status, 200, JSON.stringify(seed.body));
    });
    after(async () => {
      await t.close();
    });

    test('an async Retain refused in its slice (stored quota) gives back its items, characters and entities', async () => {
      clock += 60_000;
      const before = await usage();
      const items = [1, 2, 3].map((i) => ({ ...item(`q${i}`), entities: [{ text: `E${i}` }] }));
      const q = await t.call('POST', me('quota', '/memories'), { token: key, body: { items, async: true } });
      assert.equal(q.status, 200, JSON.stringify(q.body));
      const queued = await usage();
      assert.equal(queued.characters_per_minute, before.characters_per_minute! + 300);
      assert.equal(queued.retained_items_today, before.retained_items_today! + 3);
      const op = await failOnStoredQuota('quota', q.body.operation_id);
      assert.match(op.error, /stored memories/);
      assert.deepEqual(await usage(), before);
      retried = { bank: 'quota', id: q.body.operation_id, before };
    });

    test('a retry of the failed Retain is charged again what its failure gave back, before it is queued', async () => {
      const { bank, id, before } = retried!;
      const retry = () => t.call('POST', me(bank, `/operations/${id}/retry`), { token: key });
      // Over budget: a 429, the operation stays failed and nothing is charged.
      await setLimits({ characters_per_minute: before.characters_per_minute! + 299 });
      const refused = await retry();
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal((await operation(bank, id)).status, 'failed');
      assert.deepEqual(await usage(), before);
      await setLimits({ characters_per_minute: 100_000 });
      // Within budget: queued again, and charged its 3 items of 100 characters (the free retry the
      // failure's refund would otherwise buy).
      const ok = await retry();
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const charged = await usage();
      assert.equal(charged.characters_per_minute, before.characters_per_minute! + 300);
      assert.equal(charged.retained_items_today, before.retained_items_today! + 3);
      // A second retry at once finds it queued: a 409, and its charge is given back.
      const twice = await retry();
      assert.equal(twice.status, 409, JSON.stringify(twice.body));
      assert.deepEqual(await usage(), charged);
      // Failing again on the stored quota, it gives the new charge back.
      await failOnStoredQuota(bank, id);
      assert.deepEqual(await usage(), before);
    });

    test('two workers racing on a failing operation give its charge back once', async () => {
      clock += 60_000;
      const before = await usage();
      const items = [1, 2].map((i) => item(`r${i}`));
      const q = await t.call('POST', me('race', '/memories'), { token: key, body: { items, async: true } });
      assert.equal(q.status, 200, JSON.stringify(q.body));
      const store = t.services.store;
      // Worker A claims it and loses its lease; worker B takes it over.
      const a = await store.claimOperation('worker-a', 1);
      assert.equal(a?.operation.id, q.body.operation_id);
      await new Promise((r) => setTimeout(r, 20));
      const b = await store.claimOperation('worker-b', 60_000);
      assert.equal(b?.operation.id, q.body.operation_id);
      assert.deepEqual(retainUndone(b!.payload, b!.progress), {
        items: 2,
        units: { retained_items: 2, characters: 200 },
      });
      const back = (progress: unknown) => retainUndone(b!.payload, progress);
      const fail = (worker: string) =>
        store.finishOperation(project, 'race', q.body.operation_id, worker, {
          status: 'failed',
          error: 'boom',
          giveBack: back,
        });
      // Both (and B again, as a repeated failure path would) mark it failed at once.
      await Promise.all([fail('worker-a'), fail('worker-b'), fail('worker-b')]);
      assert.equal((await operation('race', q.body.operation_id)).status, 'failed');
      assert.deepEqual(await usage(), before);
      // A charge given back is not given back again by a later failure of the same operation.
      const again = await t.call('POST', me('race', '/memories'), {
        token: key,
        body: { items: [item('k')] },
      });
      assert.equal(again.status, 200);
      const kept = await usage();
      await store.finishOperation(project, 'race', q.body.operation_id, 'worker-b', {
        status: 'failed',
        error: 'boom',
        giveBack: back,
      });
      assert.deepEqual(await usage(), kept);
    });

    test('a Retain or import whose slice stored its memories but not its progress gives back only what it did not store', async () => {
      // A slice takes 25 items: the first stores them, then its progress write fails (as when the
      // process dies between the two); with no attempt left the operation fails for good.
      const items = Array.from({ length: 27 }, (_, i) => item(`d${i}`));
      const store = t.services.store;
      const dying = new Proxy(store, {
        get: (target, name) =>
          name === 'yieldOperation'
            ? async () => {
                throw new Error('the process died before recording its progress');
              }
            : Reflect.get(target, name),
      });
      // Every kind charged when queued (OPERATION_UNDONE): an async Retain, an import.
      const queues: Record<string, (bank: string) => Promise<string>> = {
        retain: (bank) => queueRetain(t, key, bank, items),
        [IMPORT_DOCUMENTS]: async (bank) => {
          const loose = items.map((it) => ({ text: it.content, fact_type: 'world' }));
          const zip = buildArchive({
            manifest: { schema_version: 1, source_bank_id: 'elsewhere', exported_at: null },
            documents: [],
            loose,
          });
          return (await queueImport(t.services, project, bank, zip, 'skip')).operation_id;
        },
      };
      assert.deepEqual(Object.keys(queues).sort(), Object.keys(OPERATION_UNDONE).sort());
      for (const [kind, queue] of Object.entries(queues)) {
        clock += 60_000;
        const before = await usage();
        const bank = `died-${kind}`;
        const id = await queue(bank);
        const worker = startWorker({ ...t.services, store: dying }, createLogger('silent'), {
          runners: OPERATION_RUNNERS,
          pollMs: 20,
          maxAttempts: 1,
        });
        try {
          await until(
            () => operation(bank, id),
            (o) => o.status === 'failed',
          );
        } finally {
          await worker.stop();
        }
        assert.equal((await t.call('GET', me(bank), { token: key })).body.memory_count, 25, kind);
        // The 25 stored stay charged; the 2 it did not store are given back.
        assert.deepEqual(await usage(), plusItems(before, 25), kind);
      }
    });

    test('a Retain whose slice fails after its entities are extracted gives them back', async () => {
      clock += 60_000;
      assert.equal((await t.call('PUT', me('auto'), { token: key, body: {} })).status, 200);
      const cfg = await t.call('PATCH', me('auto', '/config'), {
        token: key,
        body: { updates: { retain_auto_entities: true } },
      });
      assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
      // The same server with an embedder that fails on some texts: the slice fails after its
      // entities were extracted and charged, before anything is written.
      const real = t.services.embedder;
      const failing = await t.reconfigured({
        embedder: {
          id: real.id,
          dimensions: real.dimensions,
          embed: async (texts, signal) => {
            if (texts.some((x) => x.includes('Paris'))) throw new Error('embedder down');
            return real.embed(texts, signal);
          },
        },
      });
      const before = await usage();
      for (let i = 0; i < 3; i++) {
        const r = await failing.call('POST', me('auto', '/memories'), {
          token: key,
          body: { items: [{ content: `Alice met Bob in Paris on day ${i}.` }] },
        });
        assert.ok(r.status >= 500, JSON.stringify(r.body));
      }
      assert.deepEqual(await usage(), before);
      // Stored, a Retain is charged the entities it extracted.
      const ok = await failing.call('POST', me('auto', '/memories'), {
        token: key,
        body: { items: [{ content: 'Alice met Bob in Rome on day 9.' }] },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.ok((await usage()).entities_per_minute! > before.entities_per_minute!);
    });
  });
}
