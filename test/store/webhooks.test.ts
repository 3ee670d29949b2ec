import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';

const P = 'default';
const attempt = (n: number, outcome: 'delivered' | 'failed') => ({
  attempt: n,
  at: new Date().toISOString(),
  outcome,
  response_status: outcome === 'delivered' ? 200 : 500,
  error: outcome === 'delivered' ? null : 'the receiver answered 500',
  duration_ms: 1,
});

for (const engine of ENGINES) {
  describe(`webhook store (${engine})`, () => {
    let s: Store & { dispose(): Promise<void> };
    before(async () => {
      s = await openTestStore(engine);
    });
    after(() => s.dispose());

    const webhook = (bank: string, fields: Partial<{ enabled: boolean; event_types: string[] }> = {}) =>
      s.insertWebhook(
        P,
        bank,
        {
          id: randomUUID(),
          url: 'http://receiver.test/h',
          secret: 's3cret-value',
          event_types: fields.event_types ?? ['retain.completed'],
          enabled: fields.enabled ?? true,
          http_config: '{}',
        },
        3,
      );
    const event = (key: string) => ({ eventType: 'retain.completed', eventKey: key, body: `{"k":"${key}"}` });

    test('a bank holds at most `max` webhooks, even when inserted concurrently', async () => {
      await s.ensureBank(P, 'cap', {});
      const made = await Promise.all(Array.from({ length: 6 }, () => webhook('cap')));
      assert.equal(made.filter((w) => w !== null).length, 3);
      assert.equal((await s.listWebhooks(P, 'cap')).length, 3);
    });

    test('an event goes to enabled, subscribed webhooks, once per key', async () => {
      await s.ensureBank(P, 'ev', {});
      const on = await webhook('ev');
      await webhook('ev', { enabled: false });
      await webhook('ev', { event_types: ['consolidation.completed'] });
      assert.equal(await s.enqueueWebhookEvents(P, 'ev', [event('op:0'), event('op:1')]), 2);
      assert.equal(await s.enqueueWebhookEvents(P, 'ev', [event('op:0')]), 0);
      const listed = await s.listWebhookDeliveries(P, 'ev', on!.id, { limit: 10 });
      assert.equal(listed.items.length, 2);
      assert.ok(listed.items.every((d) => d.status === 'pending' && d.attempts === 0));
    });

    test('one claimant at a time; a lost lease records nothing; a finished delivery is final', async () => {
      await s.ensureBank(P, 'claim', {});
      const w = await webhook('claim');
      await s.enqueueWebhookEvents(P, 'claim', [event('only')]);
      // Drain whatever other tests left due, keeping this bank's delivery.
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => s.claimWebhookDelivery(`w${i}`, 60_000)),
      );
      assert.equal(claims.filter((c) => c?.bankId === 'claim').length, 1);
      const i = claims.findIndex((c) => c?.bankId === 'claim');
      const d = claims[i]!;
      assert.equal(d.attempt, 1);
      assert.equal(d.body, '{"k":"only"}');
      assert.equal(d.webhook.secret, 's3cret-value');
      const outcome = {
        status: 'failed' as const,
        url: d.webhook.url,
        responseBody: 'no',
        attempt: attempt(1, 'failed'),
      };
      assert.equal(await s.finishWebhookAttempt(P, 'claim', d.id, 'somebody-else', outcome, 10), false);
      assert.equal(await s.finishWebhookAttempt(P, 'claim', d.id, `w${i}`, outcome, 10), true);
      const [row] = (await s.listWebhookDeliveries(P, 'claim', w!.id, { limit: 10 })).items;
      assert.equal(row?.status, 'failed');
      assert.equal(row?.attempt_log.length, 1);
      assert.equal(row?.last_response_body, 'no');
      assert.equal(row?.next_attempt_at, null);
      // Failed is final: no worker claims it again.
      for (let i = 0; i < 4; i++)
        assert.notEqual((await s.claimWebhookDelivery('again', 60_000))?.bankId, 'claim');
    });

    test('a failed attempt with a wait is claimed again only once the wait is over', async () => {
      await s.ensureBank(P, 'wait', {});
      await webhook('wait');
      await s.enqueueWebhookEvents(P, 'wait', [event('w')]);
      let d = await s.claimWebhookDelivery('x', 60_000);
      while (d && d.bankId !== 'wait') d = await s.claimWebhookDelivery('x', 60_000);
      assert.ok(d);
      const retry = {
        status: 'pending' as const,
        retryInMs: 250,
        url: d.webhook.url,
        responseBody: null,
        attempt: attempt(1, 'failed'),
      };
      assert.ok(await s.finishWebhookAttempt(P, 'wait', d.id, 'x', retry, 10));
      assert.equal((await s.claimWebhookDelivery('y', 60_000))?.bankId === 'wait', false);
      // Claimed as soon as the wait is over: polled, not slept past it.
      const deadline = Date.now() + 10_000;
      let again = await s.claimWebhookDelivery('y', 60_000);
      while (!again && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
        again = await s.claimWebhookDelivery('y', 60_000);
      }
      assert.equal(again?.id, d.id);
      assert.equal(again?.attempt, 2);
    });

    test('finished deliveries beyond `keep` are dropped, newest kept', async () => {
      await s.ensureBank(P, 'keep', {});
      const w = await webhook('keep');
      await s.enqueueWebhookEvents(P, 'keep', [event('a'), event('b'), event('c'), event('d')]);
      for (;;) {
        const d = await s.claimWebhookDelivery('k', 60_000);
        if (!d) break;
        if (d.bankId !== 'keep') continue;
        const outcome = {
          status: 'delivered' as const,
          url: d.webhook.url,
          responseBody: 'ok',
          attempt: attempt(1, 'delivered'),
        };
        await s.finishWebhookAttempt(P, 'keep', d.id, 'k', outcome, 2);
      }
      const left = await s.listWebhookDeliveries(P, 'keep', w!.id, { limit: 10 });
      assert.equal(left.items.length, 2);
      assert.ok(left.items.every((d) => d.status === 'delivered' && d.delivered_at !== null));
    });

    test('deleting a webhook deletes its deliveries', async () => {
      await s.ensureBank(P, 'del', {});
      const w = await webhook('del');
      await s.enqueueWebhookEvents(P, 'del', [event('x')]);
      assert.ok(await s.deleteWebhook(P, 'del', w!.id));
      assert.equal((await s.listWebhookDeliveries(P, 'del', w!.id, { limit: 10 })).items.length, 0);
      assert.equal(await s.deleteWebhook(P, 'del', w!.id), false);
    });
  });
}
