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
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { heldEmbedder } from '../helpers/held-embedder.js';
import { projectWithKey } from '../helpers/keys.js';
import { until } from '../helpers/until.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');
/** An item of exactly 100 characters. */
const item = (tag: string) => ({ content: `${tag} ${'x'.repeat(99 - tag.length)}` });

for (const engine of ENGINES) {
  describe(`a deleted bank's queued operations give back their charge (${engine})`, () => {
    let t: TestApp;
    let key = '';
    const project = 'deleting';
    const usage = async () => {
      const p = (await t.call('GET', `/v1/default/projects/${project}`)).body;
      const { characters_per_minute, characters_per_day, retained_items_per_minute } = p.usage.budgets;
      return {
        characters_per_minute,
        characters_per_day,
        retained_items_per_minute,
        retained_items_today: p.usage.retained_items_today,
      } as Record<string, number>;
    };
    const queue = async (bank: string, items: { content: string }[]) => {
      const q = await t.call('POST', me(bank, '/memories'), { token: key, body: { items, async: true } });
      assert.equal(q.status, 200, JSON.stringify(q.body));
      return q.body.operation_id as string;
    };

    before(async () => {
      // A fixed clock: every charge and refund falls in one minute's window.
      t = await testApp(engine, { now: () => new Date(Date.parse('2030-01-01T10:00:05Z')) });
      key = await projectWithKey(t, project);
      const limits = {
        characters_per_minute: 100_000,
        characters_per_day: 100_000,
        retained_items_per_minute: 1000,
        retained_items_per_day: 1000,
      };
      const r = await t.call('PATCH', `/v1/default/projects/${project}`, { body: { limits } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // Something charged already (600 characters, 6 items): a second refund would show below it.
      const seed = await t.call('POST', me('seed', '/memories'), {
        token: key,
        body: { items: [1, 2, 3, 4, 5, 6].map((i) => item(`seed${i}`)) },
      });
      assert.equal(seed.status, 200, JSON.stringify(seed.body));
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
      const after = await usage();
      assert.deepEqual(after, {
        characters_per_minute: before.characters_per_minute! + 2500,
        characters_per_day: before.characters_per_day! + 2500,
        retained_items_per_minute: before.retained_items_per_minute! + 25,
        retained_items_today: before.retained_items_today! + 25,
      });
    });
  });
}
