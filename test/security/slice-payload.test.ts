/**
 * A queued Retain runs slice by slice, each slice claimed again from the queue. Its payload (up
 * to a 10 MB request body) never changes, yet every claim used to read and parse it whole: on the
 * embedded engine, in the thread serving every tenant, for each slice. Now the claim leaves it
 * out and the worker reads it once per operation (src/jobs/payloads.ts), sealed or not.
 * Structure only: the time this saves is measured by `npm run bench -- isolation`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import type { Services } from '../../src/core/services.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { PayloadCache } from '../../src/jobs/payloads.js';
import { startWorker } from '../../src/jobs/worker.js';
import { PAYLOAD_PART_CHARS } from '../../src/store/sql/payload-parts.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

/** 60 items naming 10 entities each: three slices of at most 200 entities. */
const items = (tag: string) =>
  Array.from({ length: 60 }, (_, i) => ({
    content: `Note ${tag} ${i}: the team met about the roadmap.`,
    entities: Array.from({ length: 10 }, (_, j) => ({ text: `${tag} Person ${i} ${j}`, type: 'PERSON' })),
  }));

for (const engine of ENGINES) {
  describe(`a sliced operation's payload is read once (${engine})`, () => {
    let store: Store & { dispose(): Promise<void> };
    let e: EncryptedApp;
    before(async () => {
      store = await openTestStore(engine);
      e = await encryptedApp(store, newMasterKey(), { worker: false });
      assert.equal((await e.call('PUT', '/v1/default/banks/sealed', {})).status, 200);
      const on = await e.call('PATCH', '/v1/default/banks/sealed/config', {
        updates: { encryption: 'managed' },
      });
      assert.equal(on.status, 200, JSON.stringify(on.body));
    });
    after(async () => {
      await e.close();
      await store.dispose();
    });

    for (const bank of ['plain', 'sealed']) {
      test(`async Retain into a ${bank} bank: every slice claimed without it, one read`, async () => {
        const inner = e.services.store;
        const claims: { id: string; withPayload: boolean; payload: unknown }[] = [];
        const reads: string[] = [];
        const counting: Store = {
          ...inner,
          async claimOperation(workerId, leaseMs, opts) {
            const c = await inner.claimOperation(workerId, leaseMs, opts);
            if (c)
              claims.push({ id: c.operation.id, withPayload: opts?.payload !== false, payload: c.payload });
            return c;
          },
          operationPayload(projectId, bankId, id) {
            reads.push(id);
            return inner.operationPayload(projectId, bankId, id);
          },
        };
        const services: Services = { ...e.services, store: counting };
        const worker = startWorker(services, createLogger('silent'), {
          runners: OPERATION_RUNNERS,
          pollMs: 20,
        });
        try {
          const r = await e.call('POST', `/v1/default/banks/${bank}/memories`, {
            items: items(bank),
            async: true,
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
          const id = r.body.operation_id as string;
          const done = await until(
            () => e.call('GET', `/v1/default/banks/${bank}/operations/${id}`),
            (x) => x.body.status === 'completed' || x.body.status === 'failed',
            120_000,
          );
          assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
          assert.equal(done.body.memories_created, 60);
          const mine = claims.filter((c) => c.id === id);
          assert.ok(mine.length >= 3, `${mine.length} slices`);
          assert.ok(
            mine.every((c) => !c.withPayload && c.payload === undefined),
            'no claim reads it',
          );
          assert.equal(reads.filter((x) => x === id).length, 1, 'read once for all its slices');
        } finally {
          await worker.stop();
        }
      });
    }

    for (const bank of ['plain', 'sealed']) {
      test(`async Retain over ${PAYLOAD_PART_CHARS / 1024} KB into a ${bank} bank: queued in parts, read back whole, run`, async () => {
        const big = Array.from({ length: 40 }, (_, i) => ({
          content: `Note big ${bank} ${i}: ${'The team met about the roadmap. '.repeat(250)}`,
        }));
        const r = await e.call('POST', `/v1/default/banks/${bank}/memories`, { items: big, async: true });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const id = r.body.operation_id as string;
        const queued = await e.services.store.operationPayload('default', bank, id);
        assert.ok(queued && queued.bytes > PAYLOAD_PART_CHARS, `${queued?.bytes} bytes: kept in parts`);
        assert.deepEqual(
          (queued.payload as { items: unknown[] }).items,
          big,
          'read back whole (opened when sealed)',
        );
        const worker = startWorker(e.services, createLogger('silent'), {
          runners: OPERATION_RUNNERS,
          pollMs: 20,
        });
        try {
          const done = await until(
            () => e.call('GET', `/v1/default/banks/${bank}/operations/${id}`),
            (x) => x.body.status === 'completed' || x.body.status === 'failed',
            120_000,
          );
          assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
          assert.ok(done.body.memories_created >= 40, `${done.body.memories_created} memories`);
        } finally {
          await worker.stop();
        }
      });
    }

    test('the cache is bounded: least recently used out, a payload bigger than it never kept', async () => {
      const ids: Record<string, { id: string; created_at: Date }> = {};
      for (const [name, n] of [
        ['a', 1],
        ['b', 1],
        ['c', 1],
        ['huge', 30],
      ] as const) {
        const r = await e.call('POST', '/v1/default/banks/plain/memories', {
          items: items(name).slice(0, n),
          async: true,
        });
        assert.equal(r.status, 200);
        const op = await e.call('GET', `/v1/default/banks/plain/operations/${r.body.operation_id}`);
        ids[name] = { id: op.body.id, created_at: new Date(op.body.created_at) };
      }
      const sized = await e.services.store.operationPayload('default', 'plain', ids.a!.id);
      assert.ok(sized && sized.bytes > 100, JSON.stringify(sized));
      // Room for two small payloads, not for the big one.
      const cache = new PayloadCache(e.services.store, sized.bytes * 2 + 10);
      const get = (name: string) =>
        cache.get({ projectId: 'default', operation: { ...ids[name]!, bank_id: 'plain' } });
      const payloadA = (await get('a')) as { items: { content: string }[] };
      assert.match(payloadA.items[0]!.content, /Note a 0/);
      await get('b');
      await get('a');
      assert.equal(cache.reads, 2);
      await get('c'); // evicts b, the least recently used
      await get('a');
      assert.equal(cache.reads, 3);
      await get('b');
      assert.equal(cache.reads, 4);
      await get('huge');
      await get('huge');
      assert.equal(cache.reads, 6, 'too big to keep: read each time');
      assert.ok(cache.size <= 2);
    });
  });
}
