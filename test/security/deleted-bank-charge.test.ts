/**
 * A queued operation's charge when its bank is deleted (issue 18). Written as the attack: a tenant
 * queues async Retains (charged their items and characters when queued) and deletes the bank
 * before they run, or while one runs. The operations go with the bank; what they held and did
 * not store is given back in the deletion's transaction, once: the worker whose slice then finds
 * its bank gone gives nothing back again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { bankPath, type TestApp } from '../helpers/app.js';
import { chargedProject, item100 as item, plusItems, queueRetain } from '../helpers/charges.js';
import { projectUsage } from '../helpers/project-usage.js';
import { ENGINES } from '../helpers/engines.js';
import { heldEmbedder } from '../helpers/held-embedder.js';
import { until } from '../helpers/until.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

for (const engine of ENGINES) {
  describe(`a deleted bank's queued operations give back their charge (${engine})`, () => {
    let t: TestApp;
    let key = '';
    const project = 'deleting';
    const usage = () => projectUsage(t, project);
    const queue = (bank: string, items: { content: string }[]) => queueRetain(t, key, bank, items);

    before(async () => {
      ({ t, key } = await chargedProject(engine, project));
    });
    after(async () => {
      await t.close();
    });

    test('pending Retains of a deleted bank give back what they held', async () => {
      const before = await usage();
      await queue('pending', [item('p1'), item('p2')]);
      await queue('pending', [item('p3')]);
      const queued = await usage();
      assert.equal(queued.characters_per_minute, before.characters_per_minute! + 300);
      assert.equal(queued.retained_items_today, before.retained_items_today! + 3);
      assert.equal((await t.call('DELETE', me('pending'), { token: key })).status, 200);
      assert.deepEqual(await usage(), before);
    });

    /** Deletes bank `bank` while a worker holds the slice that embeds a text with HOLD of `items`. */
    const deleteWhileHeld = async (bank: string, items: { content: string }[]) => {
      const held = heldEmbedder(t.services.embedder);
      const b = await t.reconfigured({ embedder: held.embedder });
      const id = await queue(bank, items);
      const worker = startWorker(b.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        await held.entered;
        assert.equal((await t.call('DELETE', me(bank), { token: key })).status, 200);
        held.release();
        // The slice finds its bank gone and the job ends; its row went with the bank.
        await until(
          () => t.services.store.getOperation(project, bank, id),
          (op) => op === null,
        );
        await until(
          async () => (await t.services.store.countPendingOperations()) === 0,
          (done) => done,
        );
      } finally {
        held.release();
        await worker.stop();
      }
    };

    test('a Retain running when its bank is deleted gives its charge back once', async () => {
      const before = await usage();
      await deleteWhileHeld('running', [item('HOLD1'), item('HOLD2'), item('HOLD3')]);
      assert.deepEqual(await usage(), before);
    });

    test('a Retain deleted in its second slice gives back the items its first did not store', async () => {
      const before = await usage();
      // A slice takes 25 items: the first stores them, the second (2 items) is held.
      const items = [...Array.from({ length: 25 }, (_, i) => item(`s${i}`)), item('HOLD4'), item('HOLD5')];
      await deleteWhileHeld('second', items);
      assert.deepEqual(await usage(), plusItems(before, 25));
    });
  });
}
