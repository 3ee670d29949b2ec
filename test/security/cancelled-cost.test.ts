/**
 * A queued operation's charge when it is cancelled (issue 18). Written as the attack: a tenant
 * queues async Retains (charged their items and characters when queued) and cancels them, pending
 * or in the middle of their run. What they did not store is given back, once, however the cancel
 * races the worker (its slice's write, its failure) or another cancel; what they stored stays
 * charged. Before, a cancelled Retain kept all of its charge, and a running one could not be
 * cancelled at all (409).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { retainUndone } from '../../src/core/retain/retain-async.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { CHARGE_CLOCK, chargedProject, item100 as item, plusItems, queueRetain } from '../helpers/charges.js';
import { projectUsage } from '../helpers/project-usage.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { openPostgres } from '../../src/store/postgres.js';
import { storeOver } from '../../src/store/open.js';
import { heldEmbedder } from '../helpers/held-embedder.js';
import { until } from '../helpers/until.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

for (const engine of ENGINES) {
  describe(`a cancelled queued operation gives back what it did not store (${engine})`, () => {
    let t: TestApp;
    let key = '';
    const project = 'cancelling';
    const usage = () => projectUsage(t, project);
    const queue = (bank: string, items: { content: string }[]) => queueRetain(t, key, bank, items);
    const cancel = (bank: string, id: string) =>
      t.call('DELETE', me(bank, `/operations/${id}`), { token: key });
    const operation = async (bank: string, id: string) =>
      (await t.call('GET', me(bank, `/operations/${id}`), { token: key })).body;
    const stored = async (bank: string) =>
      (await t.call('GET', me(bank), { token: key })).body.memory_count as number;

    before(async () => {
      ({ t, key } = await chargedProject(engine, project));
    });
    after(async () => {
      await t.close();
    });

    test('a pending Retain cancelled gives back its charge, once, however many cancels race', async () => {
      const before = await usage();
      const id = await queue('pending', [item('p1'), item('p2'), item('p3')]);
      const queued = await usage();
      assert.equal(queued.characters_per_minute, before.characters_per_minute! + 300);
      assert.equal(queued.retained_items_today, before.retained_items_today! + 3);
      const answers = await Promise.all([
        cancel('pending', id),
        cancel('pending', id),
        cancel('pending', id),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [200, 409, 409],
        JSON.stringify(answers.map((a) => a.body)),
      );
      assert.equal((await operation('pending', id)).status, 'cancelled');
      assert.deepEqual(await usage(), before);
    });

    test('a Retain cancelled in its second slice gives back what it did not store; that slice stores nothing', async () => {
      const before = await usage();
      const held = heldEmbedder(t.services.embedder);
      const b = await t.reconfigured({ embedder: held.embedder });
      // A slice takes 25 items: the first stores them, the second (2 items) is held in its embedding.
      const items = [...Array.from({ length: 25 }, (_, i) => item(`s${i}`)), item('HOLD1'), item('HOLD2')];
      const id = await queue('running', items);
      const worker = startWorker(b.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        await held.entered;
        const c = await cancel('running', id);
        assert.equal(c.status, 200, JSON.stringify(c.body));
        held.release();
        await until(
          async () => (await t.services.store.countPendingOperations()) === 0,
          (done) => done,
        );
        // The held slice, let go after the cancel, wrote nothing; the worker stays idle.
        await new Promise((r) => setTimeout(r, 100));
      } finally {
        held.release();
        await worker.stop();
      }
      const op = await operation('running', id);
      assert.equal(op.status, 'cancelled');
      assert.equal(op.memories_created, 25);
      assert.equal(await stored('running'), 25);
      assert.deepEqual(await usage(), plusItems(before, 25));
    });

    test('a cancel racing the slice that completes it: exactly what was stored stays charged', async () => {
      // Released at the moment of the cancel: either the slice's write goes first (all stored,
      // nothing given back, the cancel a 409 or cancelling what is done) or the cancel does (the
      // slice writes nothing, all given back). Never a mix, never both.
      for (let round = 0; round < 3; round++) {
        const before = await usage();
        const bank = `finish-${round}`;
        const held = heldEmbedder(t.services.embedder);
        const b = await t.reconfigured({ embedder: held.embedder });
        const id = await queue(bank, [item(`HOLD${round}a`), item(`HOLD${round}b`)]);
        const worker = startWorker(b.services, createLogger('silent'), {
          runners: OPERATION_RUNNERS,
          pollMs: 20,
        });
        try {
          await held.entered;
          const [c] = await Promise.all([cancel(bank, id), Promise.resolve().then(held.release)]);
          assert.ok(c.status === 200 || c.status === 409, JSON.stringify(c.body));
          await until(
            async () => (await t.services.store.countPendingOperations()) === 0,
            (done) => done,
          );
        } finally {
          held.release();
          await worker.stop();
        }
        const kept = await stored(bank);
        assert.ok(kept === 0 || kept === 2, `${kept} stored`);
        assert.equal((await operation(bank, id)).memories_created, kept);
        assert.deepEqual(await usage(), plusItems(before, kept));
      }
    });

    test('a cancel racing the failure of its lease holder gives the charge back once', async () => {
      const store = t.services.store;
      for (const first of ['cancel', 'fail', 'both']) {
        const before = await usage();
        const bank = `race-${first}`;
        const id = await queue(bank, [item('r1'), item('r2')]);
        const claimed = await store.claimOperation('worker-a', 60_000);
        assert.equal(claimed?.operation.id, id);
        const fail = () =>
          store.finishOperation(project, bank, id, 'worker-a', {
            status: 'failed',
            error: 'boom',
            giveBack: (progress) => retainUndone(claimed!.payload, progress),
          });
        if (first === 'both') {
          const [c] = await Promise.all([cancel(bank, id), fail()]);
          assert.ok(c.status === 200 || c.status === 409, JSON.stringify(c.body));
        } else if (first === 'cancel') {
          assert.equal((await cancel(bank, id)).status, 200);
          await fail();
        } else {
          await fail();
          assert.equal((await cancel(bank, id)).status, 409);
        }
        assert.deepEqual(await usage(), before, first);
      }
    });
  });
}

// Two instances (each its own store and connection pool) on one PostgreSQL database, as two
// processes are: the worker runs on one, the cancels arrive through both.
if (ENGINES.includes('postgres')) {
  describe('a cancel through another instance than the worker (postgres)', () => {
    let a: TestApp;
    let b: TestApp;
    let instanceB: TestApp | undefined;
    let held: ReturnType<typeof heldEmbedder>;
    let key = '';
    const project = 'two-instances';
    const usage = () => projectUsage(a, project);
    const cancel = (app: TestApp, bank: string, id: string) =>
      app.call('DELETE', me(bank, `/operations/${id}`), { token: key });

    before(async () => {
      const opened = await openTestDb('postgres');
      const url = (opened as { url?: string }).url!;
      ({ t: a, key } = await chargedProject('postgres', project, {
        store: Object.assign(storeOver(opened.db), { dispose: opened.dispose }),
      }));
      const other = await openPostgres(url, { poolSize: 4 });
      const plain = await testApp('postgres', {
        store: Object.assign(storeOver(other), { dispose: () => other.close() }),
        now: CHARGE_CLOCK,
      });
      held = heldEmbedder(plain.services.embedder);
      b = await plain.reconfigured({ embedder: held.embedder });
      instanceB = plain;
    });
    after(async () => {
      held?.release();
      // B's app over the held embedder is closed with the instance it came from (and its pool).
      await instanceB?.close();
      await a?.close();
    });

    test('cancels through both instances at once, and one of a Retain running on the other, give back once', async () => {
      const before = await usage();
      const pending = await queueRetain(a, key, 'both', [item('b1'), item('b2'), item('b3')]);
      const answers = await Promise.all([cancel(a, 'both', pending), cancel(b, 'both', pending)]);
      assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409]);
      assert.deepEqual(await usage(), before);
      const items = [...Array.from({ length: 25 }, (_, i) => item(`t${i}`)), item('HOLD-a'), item('HOLD-b')];
      const id = await queueRetain(a, key, 'across', items);
      const worker = startWorker(b.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        await held.entered;
        assert.equal((await cancel(a, 'across', id)).status, 200);
        held.release();
        await until(
          async () => (await a.services.store.countPendingOperations()) === 0,
          (done) => done,
        );
        await new Promise((r) => setTimeout(r, 100));
      } finally {
        held.release();
        await worker.stop();
      }
      assert.equal((await a.call('GET', me('across'), { token: key })).body.memory_count, 25);
      assert.deepEqual(await usage(), plusItems(before, 25));
    });
  });
}
