/**
 * The operations list in Hindsight's shape beside mnemo's, and what can be done with an
 * operation once it has ended: retry a failed one, delete a finished one's record.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`operation records (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      assert.equal((await t.call('PUT', bankPath('ops'), { body: {} })).status, 200);
    });
    after(() => t.close());

    /** Queues an operation of `kind` straight into the store (no worker runs in these tests). */
    const queue = async (kind: string) =>
      (
        await t.services.store.insertOperation({
          projectId: 'default',
          bankId: 'ops',
          id: randomUUID(),
          kind,
          payload: {},
          itemsCount: 1,
        })
      ).operation.id;

    /** Claims the bank's oldest runnable operation and ends it so. */
    const finishNext = async (status: 'completed' | 'failed') => {
      const claimed = await t.services.store.claimOperation('test-worker', 60_000);
      assert.ok(claimed);
      await t.services.store.finishOperation('default', 'ops', claimed.operation.id, 'test-worker', {
        status,
        error: status === 'failed' ? 'the model timed out' : undefined,
      });
      return claimed.operation.id;
    };

    test('the list carries bank_id, operations, total, limit and offset; type and offset filter', async () => {
      const a = await queue('alpha');
      const b = await queue('beta');
      const c = await queue('alpha');
      const all = await t.call('GET', bankPath('ops', '/operations'));
      assert.equal(all.status, 200);
      assert.equal(all.body.bank_id, 'ops');
      assert.equal(all.body.total, 3);
      assert.deepEqual(
        all.body.operations.map((o: any) => o.id),
        all.body.items.map((o: any) => o.id),
      );
      assert.deepEqual(new Set(all.body.items.map((o: any) => o.id)), new Set([a, b, c]));
      const op = all.body.operations.find((o: any) => o.id === b);
      assert.equal(op.operation_id, b);
      assert.equal(op.task_type, 'beta');
      assert.equal(op.operation_type, 'beta');
      assert.equal(op.error_message, null);
      assert.equal(op.retry_count, 0);
      const alphas = await t.call('GET', bankPath('ops', '/operations?type=alpha'));
      assert.equal(alphas.body.total, 2);
      assert.deepEqual(new Set(alphas.body.items.map((o: any) => o.id)), new Set([a, c]));
      const paged = await t.call('GET', bankPath('ops', '/operations?limit=2&offset=2'));
      assert.equal(paged.body.items.length, 1);
      assert.equal(paged.body.offset, 2);
      assert.equal(paged.body.limit, 2);
      assert.equal(paged.body.total, 3);
      const first = await t.call('GET', bankPath('ops', '/operations?limit=2'));
      assert.deepEqual(
        [...first.body.items, ...paged.body.items].map((o: any) => o.id),
        all.body.items.map((o: any) => o.id),
      );
      for (const id of [a, b, c]) await t.call('DELETE', bankPath('ops', `/operations/${id}`));
    });

    test('cancelling answers success and a message beside the operation', async () => {
      const id = await queue('gamma');
      const r = await t.call('DELETE', bankPath('ops', `/operations/${id}`));
      assert.equal(r.status, 200);
      assert.equal(r.body.success, true);
      assert.equal(r.body.operation_id, id);
      assert.equal(r.body.status, 'cancelled');
      assert.match(r.body.message, /cancelled/);
    });

    test('a failed operation is queued again by retry; any other state is a 409', async () => {
      const id = await queue('delta');
      const early = await t.call('POST', bankPath('ops', `/operations/${id}/retry`));
      assert.equal(early.status, 409);
      assert.equal(early.body.error.code, 'conflict');
      assert.equal(await finishNext('failed'), id);
      const failed = await t.call('GET', bankPath('ops', `/operations/${id}`));
      assert.equal(failed.body.status, 'failed');
      assert.equal(failed.body.error_message, 'the model timed out');
      const r = await t.call('POST', bankPath('ops', `/operations/${id}/retry`));
      assert.equal(r.status, 200);
      assert.equal(r.body.success, true);
      assert.equal(r.body.operation_id, id);
      assert.equal(r.body.status, 'pending');
      assert.equal(r.body.error, null);
      // A worker can claim it again.
      assert.equal(await finishNext('completed'), id);
      assert.equal((await t.call('POST', bankPath('ops', `/operations/${id}/retry`))).status, 409);
      assert.equal((await t.call('POST', bankPath('ops', `/operations/${randomUUID()}/retry`))).status, 404);
    });

    test('a finished operation’s record can be deleted; a pending one is a 409', async () => {
      const id = await queue('epsilon');
      const pending = await t.call('DELETE', bankPath('ops', `/operations/${id}/delete`));
      assert.equal(pending.status, 409);
      await finishNext('completed');
      const r = await t.call('DELETE', bankPath('ops', `/operations/${id}/delete`));
      assert.equal(r.status, 200);
      assert.equal(r.body.success, true);
      assert.equal(r.body.operation_id, id);
      assert.equal((await t.call('GET', bankPath('ops', `/operations/${id}`))).status, 404);
      assert.equal((await t.call('DELETE', bankPath('ops', `/operations/${id}/delete`))).status, 404);
    });

    test('retry and delete need the retain scope on /v1/me', async () => {
      const key = async (scopes: string[]) =>
        (await t.call('POST', '/v1/default/projects/default/keys', { body: { name: scopes.join(), scopes } }))
          .body.key;
      const recallOnly = await key(['recall']);
      const id = randomUUID();
      for (const [method, path] of [
        ['POST', `/operations/${id}/retry`],
        ['DELETE', `/operations/${id}/delete`],
      ] as const) {
        const r = await t.call(method, bankPath('ops', path, '/v1/me'), { token: recallOnly });
        assert.equal(r.status, 403, path);
        assert.equal(r.body.error.required_scope, 'retain');
      }
      const retainKey = await key(['retain']);
      const r = await t.call('POST', bankPath('ops', `/operations/${id}/retry`, '/v1/me'), {
        token: retainKey,
      });
      assert.equal(r.status, 404);
    });
  });
}
