import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { IN_FLIGHT_LIMIT_MS, requestHash } from '../../src/api/idempotency.js';
import { createLogger } from '../../src/api/logger.js';
import { runAllSlices } from '../../src/core/operations.js';
import { runRetainOperation } from '../../src/core/retain/retain-async.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { until } from '../helpers/until.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

/** The operator's key `key` in project `default`, as the server scopes it. */
const scope = (key: string) => ({ projectId: 'default', caller: 'operator', key });

for (const engine of ENGINES) {
  describe(`operations and idempotency (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const op = (bank: string, id: string) => t.call('GET', bankPath(bank, `/operations/${id}`));
    const count = async (bank: string) => (await t.call('GET', bankPath(bank))).body.memory_count;

    test('async retain answers at once and a worker completes it', async () => {
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        const r = await t.call('POST', bankPath('async', '/memories'), {
          body: {
            async: true,
            document_id: 'd',
            items: [{ content: 'queued one' }, { content: 'queued two' }],
          },
        });
        assert.equal(r.status, 200);
        assert.equal(r.body.success, true);
        assert.equal(r.body.async, true);
        assert.deepEqual(r.body.operation_ids, [r.body.operation_id]);
        assert.equal(r.body.document_id, 'd');
        const done = await until(
          () => op('async', r.body.operation_id),
          (x) => x.body.status === 'completed',
        );
        assert.equal(done.body.items_count, 2);
        assert.equal(done.body.memories_created, 2);
        assert.equal(done.body.error, null);
        assert.equal(await count('async'), 2);
        const list = await t.call('GET', bankPath('async', '/operations'));
        // Retain also queues a consolidation of the bank: the newest retain operation is this one.
        const retains = list.body.items.filter((o: { kind: string }) => o.kind === 'retain');
        assert.equal(retains[0].id, r.body.operation_id);
        // Let that consolidation finish: stopped mid-run it would be queued again and could be
        // claimed ahead of a later test's operation.
        await until(
          () => t.call('GET', bankPath('async', '/operations')),
          (x) => x.body.items.every((o: { status: string }) => !['pending', 'processing'].includes(o.status)),
        );
      } finally {
        await worker.stop();
      }
    });

    test('a repeated operation_id queues once; a pending operation can be cancelled once', async () => {
      const id = randomUUID();
      const body = { async: true, operation_id: id, items: [{ content: 'only once' }] };
      const a = await t.call('POST', bankPath('opid', '/memories'), { body });
      const b = await t.call('POST', bankPath('opid', '/memories'), { body });
      assert.equal(a.body.operation_id, id);
      assert.equal(b.body.operation_id, id);
      assert.equal((await t.call('GET', bankPath('opid', '/operations'))).body.items.length, 1);
      const c = await t.call('DELETE', bankPath('opid', `/operations/${id}`));
      assert.equal(c.status, 200);
      assert.equal(c.body.status, 'cancelled');
      assert.equal((await t.call('DELETE', bankPath('opid', `/operations/${id}`))).status, 409);
      assert.equal((await op('opid', randomUUID())).status, 404);
      assert.equal((await op('opid', 'nope')).status, 404);
      const bad = await t.call('POST', bankPath('opid', '/memories'), {
        body: { ...body, operation_id: 'not-a-uuid' },
      });
      assert.equal(bad.status, 400);
    });

    test('an operation whose worker died is taken over and stores its items exactly once', async () => {
      const r = await t.call('POST', bankPath('crash', '/memories'), {
        body: { async: true, items: [{ content: 'survivor a' }, { content: 'survivor b' }] },
      });
      // A worker claims it, commits the memories, and dies before recording completion.
      const claimed = await t.services.store.claimOperation('dead-worker', 1);
      assert.equal(claimed?.operation.id, r.body.operation_id);
      await runAllSlices(t.services, runRetainOperation, {
        id: claimed!.operation.id,
        projectId: claimed!.projectId,
        bankId: 'crash',
        kind: 'retain',
        payload: claimed!.payload,
        signal: new AbortController().signal,
      });
      assert.equal(await count('crash'), 2);
      await new Promise((res) => setTimeout(res, 20)); // the 1 ms lease has expired
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        const done = await until(
          () => op('crash', r.body.operation_id),
          (x) => x.body.status === 'completed',
        );
        assert.equal(done.body.attempts, 2);
        assert.equal(await count('crash'), 2, 'nothing stored twice');
      } finally {
        await worker.stop();
      }
    });

    test('a claim takes exactly one operation, the oldest, even among many (no statistics yet)', async () => {
      const fresh = await testApp(engine);
      try {
        // Planner statistics taken while the queue was empty: a plan that rescans the candidate
        // subquery per row would claim several operations at once.
        await fresh.call('POST', bankPath('claim-data', '/memories'), {
          body: { items: [{ content: 'x' }] },
        });
        assert.equal(
          (await fresh.services.store.claimOperation('w0', 60_000))?.operation.kind,
          'consolidate',
        );
        await fresh.services.store.maintainStatistics(); // the embedded engine's first ANALYZE
        const ids: string[] = [];
        for (let i = 0; i < 6; i++) {
          assert.equal((await fresh.call('PUT', bankPath(`claim-${i}`), { body: {} })).status, 200);
          const { operation } = await fresh.services.store.insertOperation({
            projectId: 'default',
            bankId: `claim-${i}`,
            id: randomUUID(),
            kind: 'teleport',
            payload: {},
            itemsCount: 0,
          });
          ids.push(operation.id);
        }
        const processing = async () => {
          let n = 0;
          for (let i = 0; i < 6; i++) {
            const page = await fresh.services.store.listOperations(
              'default',
              `claim-${i}`,
              { status: 'processing' },
              { limit: 10 },
            );
            n += page.items.length;
          }
          return n;
        };
        const claimed = await fresh.services.store.claimOperation('w1', 60_000);
        assert.equal(claimed?.operation.id, ids[0]);
        assert.equal(await processing(), 1, 'only the returned operation is claimed');
        assert.equal((await fresh.services.store.claimOperation('w2', 60_000))?.operation.id, ids[1]);
        assert.equal(await processing(), 2);
      } finally {
        await fresh.close();
      }
    });

    test('an unknown kind fails with a readable error', async () => {
      await t.call('POST', bankPath('failing', '/memories'), { body: { items: [{ content: 'x' }] } });
      const { operation } = await t.services.store.insertOperation({
        projectId: 'default',
        bankId: 'failing',
        id: randomUUID(),
        kind: 'teleport',
        payload: {},
        itemsCount: 0,
      });
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        const done = await until(
          () => op('failing', operation.id),
          (x) => x.body.status === 'failed',
        );
        assert.match(done.body.error, /unknown operation kind 'teleport'/);
      } finally {
        await worker.stop();
      }
    });

    test('Idempotency-Key replays the first answer and stores nothing twice', async () => {
      const key = randomUUID();
      const body = { items: [{ content: 'idempotent memory' }] };
      const first = await t.call('POST', bankPath('idem', '/memories'), {
        body,
        headers: { 'idempotency-key': key },
      });
      const again = await t.call('POST', bankPath('idem', '/memories'), {
        body,
        headers: { 'idempotency-key': key },
      });
      assert.equal(first.status, 200);
      assert.deepEqual(again.body, first.body);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(await count('idem'), 1);
      const other = await t.call('POST', bankPath('idem', '/memories'), {
        body: { items: [{ content: 'different' }] },
        headers: { 'idempotency-key': key },
      });
      assert.equal(other.status, 409);
      assert.equal(other.body.error.code, 'idempotency_mismatch');
      // a failed request releases its key: the corrected retry goes through
      const k2 = randomUUID();
      const bad = await t.call('POST', bankPath('idem', '/memories'), {
        body: { items: [] },
        headers: { 'idempotency-key': k2 },
      });
      assert.equal(bad.status, 400);
      assert.equal(
        (
          await t.call('POST', bankPath('idem', '/memories'), {
            body: { items: [] },
            headers: { 'idempotency-key': k2 },
          })
        ).status,
        400,
      );
      assert.equal(await count('idem'), 1);
    });

    test('a key held by a request that died mid-way is 409 at first, then taken over by the retry', async () => {
      const key = randomUUID();
      const path = bankPath('idem-crash', '/memories');
      const body = { items: [{ content: 'sent by a process that was killed' }] };
      const hash = requestHash('POST', path, JSON.stringify(body));
      // The killed request's claim: in progress, never finished or released.
      assert.equal(
        (await t.services.store.claimIdempotencyKey(scope(key), hash, IN_FLIGHT_LIMIT_MS)).state,
        'new',
      );
      const early = await t.call('POST', path, { body, headers: { 'idempotency-key': key } });
      assert.equal(early.status, 409);
      assert.equal(early.headers.get('retry-after'), '1');
      // Past the in-flight limit (0 here) the same request takes the key over; another one does not.
      assert.equal((await t.services.store.claimIdempotencyKey(scope(key), 'other', 0)).state, 'mismatch');
      assert.equal((await t.services.store.claimIdempotencyKey(scope(key), hash, 0)).state, 'new');
      await t.services.store.releaseIdempotencyKey(scope(key));
      const retry = await t.call('POST', path, { body, headers: { 'idempotency-key': key } });
      assert.equal(retry.status, 200);
      assert.equal(await count('idem-crash'), 1);
    });

    test('concurrent sync retains into one bank all land', async () => {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.call('POST', bankPath('parallel', '/memories'), {
            body: { items: [{ content: `parallel ${i}` }] },
          }),
        ),
      );
      assert.equal(await count('parallel'), 10);
    });

    test('a worker of several loops wakes every one of them to stop', async () => {
      // Each loop that finds nothing sleeps for pollMs unless woken. Before, the loops shared one
      // wake function (the last to sleep set it), so stop() woke one and waited for the others'
      // full poll, here ten minutes.
      let idle = 0;
      const store = {
        ...t.services.store,
        claimOperation: async (...args: Parameters<typeof t.services.store.claimOperation>) => {
          const claimed = await t.services.store.claimOperation(...args);
          if (claimed === null) idle++;
          return claimed;
        },
      };
      const worker = startWorker({ ...t.services, store }, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 600_000,
        concurrency: 3,
      });
      await until(
        async () => idle,
        (n) => n >= 3,
      );
      // Past the claim that found nothing: each loop is asleep once its timer is set.
      await new Promise((resolve) => setTimeout(resolve, 50));
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        worker.stop().then(() => 'stopped'),
        new Promise((resolve) => {
          timer = setTimeout(() => resolve('still asleep after 20 s'), 20_000);
        }),
      ]);
      clearTimeout(timer);
      assert.equal(stopped, 'stopped');
    });
  });
}
