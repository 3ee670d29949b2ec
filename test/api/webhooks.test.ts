import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { type Deliverer, startDeliverer } from '../../src/jobs/webhooks.js';
import { isSealed } from '../../src/core/crypto/codec.js';
import type { Services } from '../../src/core/services.js';
import { retainCompleted } from '../../src/core/webhooks/events.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

const log = createLogger('silent');
const hmac = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

for (const engine of ENGINES) {
  describe(`webhooks (${engine})`, () => {
    let t: TestApp;
    let rx: Receiver;
    const deliverers: Deliverer[] = [];
    /** A deliverer over an app's services, fast: polls every 20 ms, retries after 10 ms, then 60. */
    const deliver = (app: TestApp, opts: { maxAttempts?: number; allowPrivate?: boolean } = {}) => {
      const d = startDeliverer(app.services, log, {
        allowPrivate: opts.allowPrivate ?? true,
        pollMs: 20,
        backoffMs: 10,
        maxAttempts: opts.maxAttempts,
      });
      deliverers.push(d);
      return d;
    };
    const stopAll = async () => {
      await Promise.all(deliverers.splice(0).map((d) => d.stop()));
    };
    const hook = async (bank: string, body: Record<string, unknown>) => {
      if ((await t.call('GET', bankPath(bank))).status === 404)
        assert.equal((await t.call('PUT', bankPath(bank), { body: {} })).status, 200);
      return t.call('POST', bankPath(bank, '/webhooks'), { body });
    };
    const deliveries = (bank: string, id: string, app = t) =>
      app.call('GET', bankPath(bank, `/webhooks/${id}/deliveries`));
    const retain = (bank: string, content: string, extra: Record<string, unknown> = {}, app = t) =>
      app.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content, document_id: `doc-${content.length}`, tags: ['t1'] }], ...extra },
      });

    before(async () => {
      rx = await startReceiver();
      // The receiver listens on 127.0.0.1: these apps allow private targets, as an operator would.
      t = await testApp(engine, { webhookAllowPrivate: true });
    });
    after(async () => {
      await stopAll();
      await t.close();
      await rx.close();
    });

    test('create shows the secret once; list, update and delete never show it', async () => {
      const c = await hook('crud', { url: rx.url('/crud'), event_types: ['retain.completed'] });
      assert.equal(c.status, 201, JSON.stringify(c.body));
      assert.match(c.body.secret, /^whsec_/);
      assert.equal(c.body.has_secret, true);
      assert.equal(c.body.bank_id, 'crud');
      assert.deepEqual(c.body.event_types, ['retain.completed']);
      assert.equal(c.body.enabled, true);
      assert.deepEqual(c.body.http_config, { method: 'POST', timeout_seconds: 10, headers: {}, params: {} });
      const list = await t.call('GET', bankPath('crud', '/webhooks'));
      assert.equal(list.status, 200);
      assert.equal(list.body.items.length, 1);
      assert.equal(list.body.items[0].secret, null);
      assert.ok(!JSON.stringify(list.body).includes(c.body.secret));
      const p = await t.call('PATCH', bankPath('crud', `/webhooks/${c.body.id}`), {
        body: { enabled: false, secret: 'another-secret', event_types: null },
      });
      assert.equal(p.status, 200);
      assert.equal(p.body.enabled, false);
      assert.equal(p.body.secret, null);
      assert.deepEqual(p.body.event_types, ['retain.completed']);
      const cleared = await t.call('PATCH', bankPath('crud', `/webhooks/${c.body.id}`), {
        body: { secret: null },
      });
      assert.equal(cleared.body.has_secret, false);
      assert.equal((await t.call('DELETE', bankPath('crud', `/webhooks/${c.body.id}`))).body.success, true);
      assert.equal((await t.call('DELETE', bankPath('crud', `/webhooks/${c.body.id}`))).status, 404);
      assert.equal((await t.call('PATCH', bankPath('crud', '/webhooks/nope'), { body: {} })).status, 404);
      assert.equal((await deliveries('crud', c.body.id)).status, 404);
    });

    test('bad input is a 400: event types, reserved headers, schemes, credentials in the URL', async () => {
      for (const body of [
        { url: rx.url('/x'), event_types: ['memory_defense.triggered'] },
        { url: rx.url('/x'), http_config: { headers: { 'X-Hindsight-Signature': 'forged' } } },
        { url: rx.url('/x'), http_config: { headers: { 'X-Ok': 'a\r\nInjected: 1' } } },
        { url: rx.url('/x'), http_config: { timeout_seconds: 600 } },
        { url: 'ftp://example.com/x' },
        { url: 'not a url' },
        { url: 'https://user:pass@example.com/x' },
        { url: rx.url('/x'), secret: 'short' },
      ]) {
        const r = await hook('bad', body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.body.error.code, 'validation_error');
      }
    });

    test('a bank holds at most 20 webhooks', async () => {
      for (let i = 0; i < 20; i++) assert.equal((await hook('many', { url: rx.url(`/m${i}`) })).status, 201);
      const r = await hook('many', { url: rx.url('/m20') });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'conflict');
    });

    test('private, loopback, link-local and metadata URLs are refused unless the operator allows them', async () => {
      const strict = await t.reconfigured({ webhookAllowPrivate: false });
      await strict.call('PUT', bankPath('strict'), { body: {} });
      for (const url of [
        rx.url('/x'),
        'http://localhost:9/x',
        'http://api.localhost/x',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::1]:9/x',
        'http://[::ffff:127.0.0.1]:9/x',
        'http://10.1.2.3/x',
        'http://192.168.1.1/x',
        'http://0.0.0.0/x',
        'http://metadata.google.internal/x',
      ]) {
        const r = await strict.call('POST', bankPath('strict', '/webhooks'), { body: { url } });
        assert.equal(r.status, 400, url);
        assert.match(r.body.error.message, /MNEMO_WEBHOOK_ALLOW_PRIVATE/, url);
      }
      const made = await hook('strict', { url: rx.url('/ok') });
      assert.equal(made.status, 201);
      const patched = await strict.call('PATCH', bankPath('strict', `/webhooks/${made.body.id}`), {
        body: { url: 'http://127.0.0.2/x' },
      });
      assert.equal(patched.status, 400);
      // A public address passes (nothing is sent at creation).
      const pub = await strict.call('POST', bankPath('strict', '/webhooks'), {
        body: { url: 'https://93.184.216.34/hook' },
      });
      assert.equal(pub.status, 201);
    });

    test('a retain is delivered signed: the receiver verifies the HMAC of the exact body', async () => {
      const c = await hook('signed', { url: rx.url('/signed') });
      deliver(t);
      const r = await retain('signed', 'Alice moved to Lisbon in 2021.');
      assert.equal(r.status, 200);
      const got = await until(
        async () => rx.hits('/signed'),
        (h) => h.length >= 1,
      );
      const h = got[0]!;
      assert.equal(h.method, 'POST');
      assert.equal(h.headers['x-hindsight-signature'], hmac(c.body.secret, h.body));
      assert.equal(h.headers['x-hindsight-event'], 'retain.completed');
      assert.equal(h.headers['content-type'], 'application/json');
      const event = JSON.parse(h.body);
      assert.equal(event.event, 'retain.completed');
      assert.equal(event.bank_id, 'signed');
      assert.equal(event.status, 'completed');
      assert.equal(typeof event.operation_id, 'string');
      assert.ok(!Number.isNaN(Date.parse(event.timestamp)));
      assert.deepEqual(event.data.tags, ['t1']);
      assert.equal(event.data.document_id, 'doc-30');
      assert.ok(event.data.memory_unit_count >= 1);
      const log = await until(
        () => deliveries('signed', c.body.id),
        (d) => d.body.items[0]?.status === 'delivered',
      );
      const d = log.body.items[0];
      assert.equal(d.attempts, 1);
      assert.equal(d.last_response_status, 200);
      assert.equal(d.event_type, 'retain.completed');
      assert.equal(d.webhook_id, c.body.id);
      assert.equal(d.next_retry_at, null);
      assert.equal(d.attempt_log.length, 1);
      assert.equal(d.attempt_log[0].outcome, 'delivered');
      await stopAll();
    });

    test('retain.completed counts the memories of every document of a Retain in one query', async () => {
      await hook('docs', { url: rx.url('/docs') });
      const items = [
        { content: 'Ana paints murals in Lisbon. She sells prints at the market.', document_id: 'a' },
        { content: 'Bruno fixes bikes.', document_id: 'b' },
        { content: 'Carla runs marathons.' },
        { content: 'Dora teaches piano to children.', document_id: 'd', tags: ['x'] },
      ];
      const r = await t.call('POST', bankPath('docs', '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // The store as the event sees it: every call counted, every event kept.
      const calls: string[] = [];
      const events: { body: string }[][] = [];
      const store = new Proxy(t.services.store, {
        get(target, name, receiver) {
          const v = Reflect.get(target, name, receiver);
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            calls.push(String(name));
            if (name === 'enqueueWebhookEvents') events.push(args[2] as { body: string }[]);
            return v.apply(target, args);
          };
        },
      });
      const s: Services = { ...t.services, store };
      await retainCompleted(s, 'default', 'docs', '00000000-0000-4000-8000-0000000000aa', { items });
      const reads = calls.filter((c) => c !== 'listWebhooks' && c !== 'enqueueWebhookEvents');
      assert.equal(reads.length, 1, `one query for three documents: ${reads.join(', ')}`);
      const data = events.flat().map((e) => JSON.parse(e.body).data);
      const count = async (doc: string) =>
        (await t.call('GET', bankPath('docs', `/documents/${doc}`))).body.memory_count as number;
      assert.deepEqual(data, [
        { document_id: 'a', tags: [], memory_unit_count: await count('a') },
        { document_id: 'b', tags: [], memory_unit_count: await count('b') },
        { document_id: null, tags: [], memory_unit_count: null },
        { document_id: 'd', tags: ['x'], memory_unit_count: await count('d') },
      ]);
      assert.ok((await count('a')) >= 1 && (await count('b')) === 1);
      // A document the bank does not hold (deleted meanwhile) counts 0.
      events.length = 0;
      await retainCompleted(s, 'default', 'docs', '00000000-0000-4000-8000-0000000000ab', {
        document_id: 'gone',
        items: [{}],
      });
      assert.equal(JSON.parse(events.flat()[0]!.body).data.memory_unit_count, 0);
    });

    test('async retain and consolidation are delivered too', async () => {
      const c = await hook('async', { url: rx.url('/async') });
      const w = t.runtime.startWorker(log, { pollMs: 20, webhooks: { pollMs: 20 } });
      try {
        const r = await retain('async', 'Bob plays the cello every Sunday.', { async: true });
        assert.equal(r.status, 200);
        const hits = await until(
          async () => rx.hits('/async').map((h) => JSON.parse(h.body)),
          (h) =>
            h.some((e) => e.event === 'retain.completed') &&
            h.some((e) => e.event === 'consolidation.completed'),
        );
        const retained = hits.find((e) => e.event === 'retain.completed');
        assert.equal(retained.operation_id, r.body.operation_id);
        const consolidated = hits.find((e) => e.event === 'consolidation.completed');
        assert.equal(typeof consolidated.data.observations_created, 'number');
        assert.equal(consolidated.data.error_message, null);
        for (const h of rx.hits('/async'))
          assert.equal(h.headers['x-hindsight-signature'], hmac(c.body.secret, h.body));
      } finally {
        await w.stop();
      }
    });

    test('a receiver failing, then answering, gets the delivery retried', async () => {
      rx.failNext('/flaky', 2);
      const c = await hook('flaky', { url: rx.url('/flaky'), event_types: ['retain.completed'] });
      deliver(t);
      await retain('flaky', 'Carol prefers tea.');
      const done = await until(
        () => deliveries('flaky', c.body.id),
        (d) => d.body.items[0]?.status === 'delivered',
      );
      const d = done.body.items[0];
      assert.equal(d.attempts, 3);
      assert.deepEqual(
        d.attempt_log.map((a: { outcome: string; response_status: number }) => [
          a.outcome,
          a.response_status,
        ]),
        [
          ['failed', 503],
          ['failed', 503],
          ['delivered', 200],
        ],
      );
      assert.equal(rx.hits('/flaky').length, 3);
      await stopAll();
    });

    test('attempts stop at the maximum: the delivery is failed, with every error logged', async () => {
      rx.failNext('/down', 100);
      const c = await hook('down', { url: rx.url('/down'), event_types: ['retain.completed'] });
      deliver(t, { maxAttempts: 3 });
      await retain('down', 'Dan sells boats.');
      const done = await until(
        () => deliveries('down', c.body.id),
        (d) => d.body.items[0]?.status === 'failed',
      );
      const d = done.body.items[0];
      assert.equal(d.attempts, 3);
      assert.equal(d.last_response_status, 503);
      assert.match(d.last_error, /503/);
      assert.equal(d.attempt_log.length, 3);
      assert.equal(d.last_response_body, 'unavailable');
      await stopAll();
      assert.equal(rx.hits('/down').length, 3);
    });

    test('redirects are not followed', async () => {
      const c = await hook('redirect', { url: rx.url('/redirect'), event_types: ['retain.completed'] });
      deliver(t, { maxAttempts: 1 });
      await retain('redirect', 'Eve visits Oslo.');
      const done = await until(
        () => deliveries('redirect', c.body.id),
        (d) => d.body.items[0]?.status === 'failed',
      );
      assert.equal(done.body.items[0].last_response_status, 302);
      assert.match(done.body.items[0].last_error, /redirect/);
      await stopAll();
      assert.equal(rx.hits('/redirect').length, 1);
      assert.equal(rx.hits('/target').length, 0);
    });

    test('an answer is read up to 1 KB and recorded whatever bytes it holds', async () => {
      const nul = await hook('answers', { url: rx.url('/nul'), event_types: ['retain.completed'] });
      const big = await hook('answers', { url: rx.url('/big'), event_types: ['retain.completed'] });
      deliver(t, { maxAttempts: 1 });
      await retain('answers', 'Ida answers oddly.');
      for (const [w, check] of [
        [nul.body.id, (b: string) => b === 'a\uFFFDb'],
        [big.body.id, (b: string) => b === 'x'.repeat(1024)],
      ] as const) {
        const done = await until(
          () => deliveries('answers', w),
          (d) => d.body.items[0]?.status === 'delivered',
        );
        assert.ok(
          check(done.body.items[0].last_response_body),
          done.body.items[0].last_response_body.slice(0, 40),
        );
      }
      await stopAll();
    });

    test('a receiver that does not answer in time fails the attempt', async () => {
      const c = await hook('hang', {
        url: rx.url('/hang'),
        event_types: ['retain.completed'],
        http_config: { timeout_seconds: 1 },
      });
      deliver(t, { maxAttempts: 1 });
      await retain('hang', 'Jon waits.');
      const done = await until(
        () => deliveries('hang', c.body.id),
        (d) => d.body.items[0]?.status === 'failed',
      );
      const a = done.body.items[0].attempt_log[0];
      assert.match(a.error, /no answer within 1 s/);
      assert.ok(a.duration_ms >= 900 && a.duration_ms < 5000, String(a.duration_ms));
      await stopAll();
    });

    test('a private address is refused again at delivery time (DNS rebinding)', async () => {
      const c = await hook('rebind', { url: rx.url('/rebind'), event_types: ['retain.completed'] });
      // Made while private targets were allowed; delivered by a process that refuses them.
      deliver(t, { allowPrivate: false, maxAttempts: 1 });
      await retain('rebind', 'Frank owns a bakery.');
      const done = await until(
        () => deliveries('rebind', c.body.id),
        (d) => d.body.items[0]?.status === 'failed',
      );
      assert.match(done.body.items[0].last_error, /private|loopback/);
      assert.equal(done.body.items[0].last_response_status, null);
      await stopAll();
      assert.equal(rx.hits('/rebind').length, 0);
    });

    test('a delivery pending when the app stops is delivered after a restart', async () => {
      const c = await hook('restart', { url: rx.url('/restart'), event_types: ['retain.completed'] });
      // No worker runs in this app: the event waits in the database.
      await retain('restart', 'Grace climbs in Kalymnos.');
      const pending = await deliveries('restart', c.body.id);
      assert.equal(pending.body.items.length, 1);
      assert.equal(pending.body.items[0].status, 'pending');
      assert.equal(rx.hits('/restart').length, 0);
      const restarted = await t.reconfigured({});
      const w = restarted.runtime.startWorker(log, { webhooks: { pollMs: 20 } });
      try {
        await until(
          () => deliveries('restart', c.body.id, restarted),
          (d) => d.body.items[0]?.status === 'delivered',
        );
      } finally {
        await w.stop();
      }
      assert.equal(rx.hits('/restart').length, 1);
      assert.equal(
        rx.hits('/restart')[0]!.headers['x-hindsight-signature'],
        hmac(c.body.secret, rx.hits('/restart')[0]!.body),
      );
    });

    test('two apps sharing the database deliver each event once', async () => {
      const c = await hook('twice', { url: rx.url('/twice'), event_types: ['retain.completed'] });
      const other = await t.reconfigured({});
      deliver(t);
      deliver(other);
      const n = 12;
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          retain('twice', `Item number ${i} of the shared run.`, {}, i % 2 ? t : other),
        ),
      );
      // Every delivery recorded as delivered: none is left to claim. Stopping waits for the
      // attempts in flight, so a duplicate sent meanwhile has reached the receiver by then.
      await until(
        async () =>
          (await t.call('GET', bankPath('twice', `/webhooks/${c.body.id}/deliveries?limit=50`))).body.items,
        (items: { status: string }[]) => items.length === n && items.every((d) => d.status === 'delivered'),
      );
      await stopAll();
      const ids = rx.hits('/twice').map((h) => h.headers['x-mnemo-delivery']);
      assert.equal(ids.length, n);
      assert.equal(new Set(ids).size, n);
      const log = await t.call('GET', bankPath('twice', `/webhooks/${c.body.id}/deliveries?limit=5`));
      assert.equal(log.body.items.length, 5);
      assert.ok(log.body.next_cursor);
      const rest = await t.call(
        'GET',
        bankPath('twice', `/webhooks/${c.body.id}/deliveries?limit=50&cursor=${log.body.next_cursor}`),
      );
      assert.equal(rest.body.items.length, n - 5);
      assert.ok(rest.body.items.every((d: { status: string }) => d.status === 'delivered'));
    });

    test('deleting a bank removes its webhooks and deliveries', async () => {
      const c = await hook('gone', { url: rx.url('/gone'), event_types: ['retain.completed'] });
      await retain('gone', 'Heidi sails.');
      assert.equal((await deliveries('gone', c.body.id)).body.items.length, 1);
      assert.equal((await t.call('DELETE', bankPath('gone'))).status, 200);
      assert.equal(await t.raw.getWebhook('default', 'gone', c.body.id), null);
      const left = await t.raw.listWebhookDeliveries('default', 'gone', c.body.id, { limit: 10 });
      assert.equal(left.items.length, 0);
      await retain('gone', 'Heidi sails again.');
      assert.deepEqual((await t.call('GET', bankPath('gone', '/webhooks'))).body.items, []);
    });
  });

  describe(`webhooks with a master key (${engine})`, () => {
    let t: TestApp;
    let rx: Receiver;
    before(async () => {
      rx = await startReceiver();
      t = await testApp(engine, { webhookAllowPrivate: true, masterKey: randomBytes(32).toString('base64') });
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    for (const encrypted of [false, true]) {
      test(`the secret and headers are stored sealed (${encrypted ? 'encrypted' : 'plain'} bank) and deliveries still verify`, async () => {
        const bank = encrypted ? 'sealed-enc' : 'sealed-plain';
        assert.equal((await t.call('PUT', bankPath(bank), { body: {} })).status, 200);
        if (encrypted) {
          const r = await t.call('PATCH', bankPath(bank, '/config'), {
            body: { updates: { encryption: 'managed' } },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        assert.equal((await t.raw.bankEncryption('default', bank))?.target, encrypted ? 'managed' : 'none');
        const c = await t.call('POST', bankPath(bank, '/webhooks'), {
          body: {
            url: rx.url(`/${bank}`),
            http_config: { headers: { authorization: 'Bearer receiver-token' } },
          },
        });
        assert.equal(c.status, 201, JSON.stringify(c.body));
        const stored = await t.raw.getWebhook('default', bank, c.body.id);
        assert.ok(stored?.secret && isSealed(stored.secret));
        assert.ok(isSealed(stored.http_config));
        assert.ok(!stored.http_config.includes('receiver-token'));
        const listed = await t.call('GET', bankPath(bank, '/webhooks'));
        assert.equal(listed.body.items[0].http_config.headers.authorization, 'Bearer receiver-token');
        await t.call('POST', bankPath(bank, '/memories'), {
          body: { items: [{ content: 'Ivan keeps bees.', document_id: 'apiary-notes' }] },
        });
        // What the database holds for the queued delivery: its body sealed in an encrypted bank.
        // (Claimed beneath the encryption layer for 300 ms, past other banks' deliveries still
        // queued; the worker below takes each over when its lease ends.)
        let raw = await t.raw.claimWebhookDelivery('probe', 300);
        while (raw && raw.bankId !== bank) raw = await t.raw.claimWebhookDelivery('probe', 300);
        assert.ok(raw);
        assert.equal(isSealed(raw.body), encrypted);
        assert.equal(raw.body.includes('apiary-notes'), !encrypted);
        const w = t.runtime.startWorker(log, { webhooks: { pollMs: 20 } });
        try {
          const hits = await until(
            async () => rx.hits(`/${bank}`),
            (h) => h.some((x) => JSON.parse(x.body).event === 'retain.completed'),
          );
          const h = hits.find((x) => JSON.parse(x.body).event === 'retain.completed')!;
          assert.equal(h.headers['x-hindsight-signature'], hmac(c.body.secret, h.body));
          assert.equal(h.headers.authorization, 'Bearer receiver-token');
        } finally {
          await w.stop();
        }
      });
    }
  });
}
