/**
 * A worker whose lease on an operation is taken over while it runs a slice: another worker
 * claimed it once the lease ran out. The first worker's renewal finds the lease gone and aborts
 * the slice; the slice writes nothing, the operation stays with its new holder untouched (no
 * retry scheduled by the old one), and the old worker says 'operation stopped: its lease was
 * lost' rather than 'operation will retry'. Both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Embedder } from '../../src/embed/embedder.js';
import type { Db } from '../../src/store/db.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { bankPath, type TestApp, testAppWithDb } from '../helpers/app.js';
import { capturedLog } from '../helpers/captured-log.js';
import { ENGINES } from '../helpers/engines.js';
import { heldEmbedder } from '../helpers/held-embedder.js';
import { until } from '../helpers/until.js';

/** `held` that also gives up when its signal aborts, as an embedder over the network does. */
const abortable = (held: Embedder): Embedder => ({
  ...held,
  embed: (texts, signal) =>
    Promise.race([
      held.embed(texts, signal),
      new Promise<never>((_, reject) =>
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true }),
      ),
    ]),
});

for (const engine of ENGINES) {
  describe(`a worker whose lease was taken over (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    before(async () => {
      ({ t, db } = await testAppWithDb(engine));
    });
    after(() => t.close());

    test("its slice writes nothing and it says 'operation stopped: its lease was lost'", async () => {
      const bank = 'lease-lost';
      const held = heldEmbedder(t.services.embedder);
      const a = await t.reconfigured({ embedder: abortable(held.embedder) });
      const items = [{ content: 'Alice met Bob in Paris HOLD' }, { content: 'Carol flew to Rome' }];
      const q = await t.call('POST', bankPath(bank, '/memories'), { body: { items, async: true } });
      assert.equal(q.status, 200, JSON.stringify(q.body));
      const id = q.body.operation_id as string;
      const logged: { msg: string; operation?: string }[] = [];
      // Short, so that its renewal (every third of it) soon finds the lease gone.
      const worker = startWorker(a.services, capturedLog(logged), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
        leaseMs: 600,
      });
      const store = t.services.store;
      try {
        await held.entered;
        // The lease runs out (as if the worker had stalled) and another worker claims it; a
        // renewal slipping in between is undone by the next try.
        const claimed = await until(
          async () => {
            await db.query(`UPDATE operations SET locked_until = now() - interval '1 second' WHERE id = $1`, [
              id,
            ]);
            return store.claimOperation('worker-b', 60_000);
          },
          (c) => c?.operation.id === id,
        );
        assert.equal(claimed?.operation.status, 'processing');
        await until(
          async () => logged.filter((l) => l.operation === id).map((l) => l.msg),
          (msgs) => msgs.length > 0,
        );
      } finally {
        held.release();
        await worker.stop();
      }
      assert.deepEqual(
        logged.filter((l) => l.operation === id).map((l) => l.msg),
        ['operation stopped: its lease was lost'],
      );
      const op = (await t.call('GET', bankPath(bank, `/operations/${id}`))).body;
      // Still the new holder's, running: the old worker neither retried nor failed it.
      assert.equal(op.status, 'processing');
      assert.equal(op.error ?? null, null);
      assert.equal(op.memories_created, 0);
      const rows = await db.query<{ locked_by: string }>('SELECT locked_by FROM operations WHERE id = $1', [
        id,
      ]);
      assert.equal(rows[0]?.locked_by, 'worker-b');
      assert.equal((await t.call('GET', bankPath(bank))).body.memory_count, 0);
      const listed = await t.call('GET', bankPath(bank, '/memories'));
      assert.deepEqual(listed.body.items, []);
    });
  });
}
