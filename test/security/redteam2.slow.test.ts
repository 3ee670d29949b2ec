/**
 * The routes and jobs a red team had not attacked yet (evaluations, mental models, webhooks,
 * ids taken from the client), attacked as a hostile tenant with a valid key of its own project
 * and as two clients on two app instances over one database:
 * - one tenant's webhook deliveries to a receiver that never answers must not hold every
 *   delivery slot while another tenant's events wait behind its backlog;
 * - two refreshes of one mental model, on two instances, must not run at once (an older
 *   Reflect finishing last overwrote the newer answer, and both were charged);
 * - every id the client names (evaluation, `from`, mental model, webhook, operation) reaches
 *   only its own project's bank.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { type Deliverer, startDeliverer } from '../../src/jobs/webhooks.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

const log = createLogger('silent');
const me = (bank: string, rest = '') => `/v1/me/banks/${encodeURIComponent(bank)}${rest}`;

for (const engine of ENGINES) {
  describe(`red team 2: evaluations, mental models, webhooks, ids (${engine})`, () => {
    let t: TestApp;
    let rx: Receiver;
    const keys: Record<string, string> = {};
    const deliverers: Deliverer[] = [];

    before(async () => {
      rx = await startReceiver();
      // The receiver listens on 127.0.0.1: this app allows private targets, as an operator would.
      t = await testApp(engine, { webhookAllowPrivate: true });
      for (const p of ['hostile', 'victim']) {
        const r = await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        const k = await t.call('POST', `/v1/default/projects/${p}/keys`, {
          body: { name: p, scopes: ['retain', 'recall', 'admin'] },
        });
        assert.equal(k.status, 201, JSON.stringify(k.body));
        keys[p] = k.body.key;
      }
    });
    after(async () => {
      await Promise.all(deliverers.splice(0).map((d) => d.stop()));
      await t.close();
      await rx.close();
    });

    test("one tenant's deliveries to a receiver that never answers do not make another's wait behind them", async () => {
      const hook = async (project: string, bank: string, path: string) => {
        assert.equal((await t.call('PUT', me(bank), { token: keys[project], body: {} })).status, 200);
        const r = await t.call('POST', me(bank, '/webhooks'), {
          token: keys[project],
          body: { url: rx.url(path), event_types: ['retain.completed'], http_config: { timeout_seconds: 1 } },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      };
      await hook('hostile', 'tarpit', '/hang');
      await hook('victim', 'hooked', '/victim');
      const event = (n: number) => ({
        eventType: 'retain.completed',
        eventKey: `retain.completed:attack:${n}`,
        body: JSON.stringify({ event: 'retain.completed', n }),
      });
      // 12 events of the hostile tenant first, then one of the victim's.
      await t.services.store.enqueueWebhookEvents(
        'hostile',
        'tarpit',
        Array.from({ length: 12 }, (_, n) => event(n)),
      );
      await new Promise((r) => setTimeout(r, 20));
      await t.services.store.enqueueWebhookEvents('victim', 'hooked', [event(0)]);
      deliverers.push(
        startDeliverer(t.services, log, {
          allowPrivate: true,
          pollMs: 20,
          backoffMs: 3600_000,
          concurrency: 2,
        }),
      );
      await until(
        async () => rx.hits('/victim').length,
        (n) => n === 1,
        30_000,
      );
      // Served in turn: at most two rounds of the two slots went to the tarpit before the victim's.
      // Before: first come, first served, all 12 (each holding a slot for its 1 s timeout).
      const tarpitted = rx.hits('/hang').length;
      assert.ok(tarpitted <= 4, `${tarpitted} hostile attempts went before the victim's delivery`);
      await Promise.all(deliverers.splice(0).map((d) => d.stop()));
    });

    test('webhook URLs in the reserved IPv6 forms that embed an IPv4 address are refused', async () => {
      // Before: http://[::127.0.0.1]/ (IPv4-compatible) and http://[::ffff:0:127.0.0.1]/
      // (IPv4-translated) were accepted; a translator on the host's path takes them to loopback.
      const app = await t.reconfigured({ webhookAllowPrivate: false });
      assert.equal((await app.call('PUT', me('forms'), { token: keys.hostile, body: {} })).status, 200);
      for (const url of [
        'http://[::127.0.0.1]/x',
        'http://[::ffff:0:127.0.0.1]/x',
        'http://[::ffff:127.0.0.1]/x',
      ]) {
        const r = await app.call('POST', me('forms', '/webhooks'), { token: keys.hostile, body: { url } });
        assert.equal(r.status, 400, `${url}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    });

    test("ids of another project's bank reach nothing, even under a bank of the same name", async () => {
      const as = (project: string) => ({ token: keys[project] });
      for (const p of ['victim', 'hostile']) {
        assert.equal((await t.call('PUT', me('shared'), { ...as(p), body: {} })).status, 200);
        const r = await t.call('POST', me('shared', '/memories'), {
          ...as(p),
          body: { items: [{ content: `A note of ${p} about Alice.` }] },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const memory = (await t.call('GET', me('shared', '/memories?limit=1'), as('victim'))).body.items[0].id;
      const ev = await t.call('POST', me('shared', '/evaluations'), {
        ...as('victim'),
        body: { cases: [{ query: 'What about Alice?', expected_memory_ids: [memory] }] },
      });
      assert.equal(ev.status, 201, JSON.stringify(ev.body));
      const mm = await t.call('POST', me('shared', '/mental-models'), {
        ...as('victim'),
        body: { id: 'private-model', name: 'Private', source_query: 'What about Alice?' },
      });
      assert.equal(mm.status, 200, JSON.stringify(mm.body));
      const hook = await t.call('POST', me('shared', '/webhooks'), {
        ...as('victim'),
        body: { url: rx.url('/private'), event_types: ['retain.completed'] },
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      const attempts: [string, string, unknown?][] = [
        ['GET', `/evaluations/${ev.body.id}`],
        ['DELETE', `/evaluations/${ev.body.id}`],
        ['POST', '/evaluations', { from: ev.body.id }],
        ['GET', '/mental-models/private-model'],
        ['GET', '/mental-models/private-model/history'],
        ['POST', '/mental-models/private-model/refresh'],
        ['PATCH', '/mental-models/private-model', { name: 'taken' }],
        ['DELETE', '/mental-models/private-model'],
        ['GET', `/operations/${mm.body.operation_id}`],
        ['DELETE', `/operations/${mm.body.operation_id}`],
        ['PATCH', `/webhooks/${hook.body.id}`, { url: rx.url('/stolen') }],
        ['GET', `/webhooks/${hook.body.id}/deliveries`],
        ['DELETE', `/webhooks/${hook.body.id}`],
        ['GET', `/memories/${memory}`],
      ];
      for (const [method, rest, body] of attempts) {
        const r = await t.call(method, me('shared', rest), { ...as('hostile'), ...(body ? { body } : {}) });
        assert.equal(r.status, 404, `${method} ${rest}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      // Everything of the victim's is as it was.
      assert.equal(
        (await t.call('GET', me('shared', `/evaluations/${ev.body.id}`), as('victim'))).status,
        200,
      );
      const model = await t.call('GET', me('shared', '/mental-models/private-model'), as('victim'));
      assert.equal(model.body.name, 'Private');
      const hooks = await t.call('GET', me('shared', '/webhooks'), as('victim'));
      assert.equal(hooks.body.items[0].url, rx.url('/private'));
      const op = await t.call('GET', me('shared', `/operations/${mm.body.operation_id}`), as('victim'));
      assert.equal(op.status, 200);
    });
  });

  describe(`red team 2: evaluations on two instances (${engine})`, () => {
    let t: TestApp;
    let other: TestApp;
    let memoryId = '';

    before(async () => {
      t = await testApp(engine);
      other = await t.reconfigured({});
      const r = await t.call('POST', '/v1/default/banks/ev/memories', {
        body: { items: [{ content: 'Alice works at the Berlin marathon office.' }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const list = await t.call('GET', '/v1/default/banks/ev/memories?limit=1');
      memoryId = list.body.items[0].id;
    });
    after(() => t.close());

    test('one evaluation of a bank runs at a time, whatever the instance; the others get 429 before any charge', async () => {
      const cases = Array.from({ length: 60 }, (_, i) => ({
        query: `Where does Alice work? ${i}`,
        expected_memory_ids: [memoryId],
      }));
      const run = (app: TestApp) =>
        app.call('POST', '/v1/default/banks/ev/evaluations', { body: { k: 5, budget: 'low', cases } });
      const answers = await Promise.all([run(t), run(other), run(t), run(other)]);
      const statuses = answers.map((a) => a.status).sort();
      // Before: 4 × 201, four runs of 60 Recalls each side by side (a tenant's 1,000-case runs:
      // as many at once as its recall budget pays for, every one on the request path).
      assert.deepEqual(statuses, [201, 429, 429, 429]);
      const refused = answers.find((a) => a.status === 429)!;
      assert.equal(refused.body.error.limit, 'evaluations_per_bank');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      // The slot is given back: the next run goes.
      assert.equal((await run(other)).status, 201);
      const page = await t.call('GET', '/v1/default/banks/ev/evaluations');
      assert.equal(page.body.items.length, 2);
    });
  });

  describe(`red team 2: one mental model refreshed on two instances (${engine})`, () => {
    let plain: TestApp;
    let fake: FakeOpenAI;
    let release: () => void = () => {};

    before(async () => {
      fake = await startFakeOpenAI();
      plain = await testApp(engine);
      const cfg = await plain.call('PUT', '/v1/default/banks/mm', { body: { enable_observations: false } });
      assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
      const r = await plain.call('POST', '/v1/default/banks/mm/memories', {
        body: { items: [{ content: 'Alice is training for the Berlin marathon in September.' }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });
    after(async () => {
      release();
      await plain.close();
      await fake.close();
    });

    test('a refresh asked during another waits for it: one Reflect at a time, charged once', async () => {
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The first Reflect is held until the test lets it go and answers 'old'; later ones 'new'.
      fake.respond(async (_body, n) => {
        if (n === 0) {
          await gate;
          return { content: 'old' };
        }
        return { content: 'new' };
      });
      const llm = () => createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 });
      const a = await plain.reconfigured({ llm: llm(), runWorker: true });
      const b = await plain.reconfigured({ llm: llm(), runWorker: true });
      const made = await a.call('POST', '/v1/default/banks/mm/mental-models', {
        body: { id: 'training', name: 'Training', source_query: 'How is Alice’s training going?' },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      await until(
        async () => fake.requests.length,
        (n) => n === 1,
      );
      // Asked again while the first refresh is in its Reflect: a second operation is queued,
      // and instance b (or a) has a free worker for it.
      const again = await b.call('POST', '/v1/default/banks/mm/mental-models/training/refresh');
      assert.ok(again.status < 300, JSON.stringify(again.body));
      const second = again.body.operation_id as string;
      assert.notEqual(second, made.body.operation_id);
      // Give the workers time to claim it (they poll); then let the first Reflect answer.
      await new Promise((r) => setTimeout(r, 1500));
      const concurrent = fake.requests.length;
      release();
      for (const id of [made.body.operation_id, second]) {
        const op = await until(
          async () => (await plain.call('GET', `/v1/default/banks/mm/operations/${id}`)).body,
          (o) => o.status === 'completed' || o.status === 'failed',
        );
        assert.equal(op.status, 'completed', JSON.stringify(op));
      }
      const m = (await plain.call('GET', '/v1/default/banks/mm/mental-models/training')).body;
      // Before: the second operation ran its own Reflect beside the first (2 model calls at once,
      // both charged) and saved it, and the first, finishing last, overwrote it. Now the second
      // waits its turn and finds the request answered by the first (a request made while a
      // refresh is under way joins it).
      assert.equal(concurrent, 1, 'a second Reflect of the model ran while the first was under way');
      assert.equal(fake.maxInFlight, 1);
      assert.equal(fake.requests.length, 1);
      assert.equal(m.content, 'old');
      const history = await plain.call('GET', '/v1/default/banks/mm/mental-models/training/history');
      assert.equal(history.status, 200, JSON.stringify(history.body));
      assert.equal(
        JSON.stringify(history.body).split('"refresh"').length - 1,
        1,
        JSON.stringify(history.body),
      );
    });
  });
}
