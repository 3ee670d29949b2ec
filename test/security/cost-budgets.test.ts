/**
 * Cost budgets, written as the attacks: a tenant that sends one huge Retain, many small ones, or
 * makes the model work, is stopped by its own project's budget (429 before any work, nothing
 * stored), other tenants are not, two app instances on one database never let a budget overshoot,
 * and a queued job of a project over budget waits instead of running.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { chargeCost } from '../../src/core/budgets.js';
import type { Worker } from '../../src/jobs/worker.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { openStore } from '../../src/store/open.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, type TestResponse, testApp } from '../helpers/app.js';
import { createTestDatabase, ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

/** A budget's 429: error body, `Retry-After` and `RateLimit-*` headers. */
function assert429(r: TestResponse, limit: string, max: number, remaining: number) {
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.equal(r.body.error.code, 'rate_limited');
  assert.equal(r.body.error.limit, limit);
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(retry >= 1, `Retry-After ${r.headers.get('retry-after')}`);
  assert.equal(r.headers.get('ratelimit-limit'), String(max));
  assert.equal(r.headers.get('ratelimit-remaining'), String(remaining));
  assert.equal(Number(r.headers.get('ratelimit-reset')), retry);
}

const text = (n: number, tag: string) => `${tag} ${'x'.repeat(Math.max(0, n - tag.length - 1))}`;

for (const engine of ENGINES) {
  describe(`cost budgets (${engine})`, () => {
    let t: TestApp;
    let fake: FakeOpenAI;
    // Fixed windows: moving the clock past a window's end is waiting for its reset.
    let clock = Date.parse('2030-01-01T10:00:05Z');
    const keys: Record<string, string> = {};
    const setLimits = async (project: string, limits: Record<string, number | null>) => {
      const r = await t.call('PATCH', `/v1/default/projects/${project}`, { body: { limits } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    const usage = async (project: string) =>
      (await t.call('GET', `/v1/default/projects/${project}`)).body.usage.budgets as Record<string, number>;
    const retain = (project: string, bank: string, items: unknown[], async = false) =>
      t.call('POST', me(bank, '/memories'), {
        token: keys[project],
        body: { items, ...(async && { async }) },
      });

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      fake = await startFakeOpenAI();
      for (const p of ['huge', 'small', 'other', 'llm', 'reader']) {
        assert.equal(
          (await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } })).status,
          201,
        );
        const k = await t.call('POST', `/v1/default/projects/${p}/keys`, {
          body: { name: 'a', scopes: ['retain', 'recall', 'admin'] },
        });
        keys[p] = k.body.key;
      }
    });
    after(async () => {
      await t.close();
      await fake.close();
    });

    test('a Retain over the character budget is 429 before any work: no bank, no memory, nothing counted', async () => {
      await setLimits('huge', { characters_per_minute: 1000 });
      for (const async of [false, true]) {
        const r = await retain(
          'huge',
          'never',
          [{ content: text(600, 'a') }, { content: text(401, 'b') }],
          async,
        );
        assert429(r, 'characters_per_minute', 1000, 1000);
        assert.match(r.body.error.message, /alone costs 1001 characters/);
      }
      // context counts as content does
      assert429(
        await retain('huge', 'never', [{ content: 'short', context: text(996, 'c') }]),
        'characters_per_minute',
        1000,
        1000,
      );
      assert.equal((await t.call('GET', me('never', '/memories'), { token: keys.huge })).status, 404);
      const u = await usage('huge');
      assert.equal(u.characters_per_minute, 0);
      assert.equal(u.retained_items_per_minute, 0);
      const p = await t.call('GET', '/v1/default/projects/huge');
      assert.equal(p.body.usage.retained_items_today, 0, 'the items quota was given back');
      // exactly the budget passes
      assert.equal((await retain('huge', 'fits', [{ content: text(1000, 'd') }])).status, 200);
    });

    test('many small Retains: 429 once the window is spent, another project is unaffected, the next window recovers', async () => {
      await setLimits('small', { characters_per_minute: 100, characters_per_day: 150 });
      await setLimits('other', { characters_per_minute: 100 });
      for (let i = 0; i < 4; i++)
        assert.equal((await retain('small', 'b', [{ content: text(25, `s${i}`) }])).status, 200);
      const over = await retain('small', 'b', [{ content: text(25, 'late') }]);
      assert429(over, 'characters_per_minute', 100, 0);
      assert.equal(over.headers.get('retry-after'), '55');
      // the other tenant, same budget, same minute
      for (let i = 0; i < 4; i++)
        assert.equal((await retain('other', 'b', [{ content: text(25, `o${i}`) }])).status, 200);
      const listed = await t.call('GET', me('b', '/memories'), { token: keys.small });
      assert.equal(listed.body.items.length, 4, 'the refused Retain stored nothing');
      clock += 60_000;
      assert.equal((await retain('small', 'b', [{ content: text(40, 'next') }])).status, 200);
      // 140 of the day's 150 are spent: the day's budget refuses what the minute's would allow
      const daily = await retain('small', 'b', [{ content: text(20, 'day') }]);
      assert429(daily, 'characters_per_day', 150, 10);
      assert.ok(Number(daily.headers.get('retry-after')) > 3600);
      const u = await usage('small');
      assert.deepEqual([u.characters_per_minute, u.characters_per_day], [40, 140]);
    });

    test('the operator raises the budget (and null lifts it) within the same window', async () => {
      assert429(await retain('small', 'b', [{ content: text(20, 'up') }]), 'characters_per_day', 150, 10);
      await setLimits('small', { characters_per_minute: 1000, characters_per_day: 1000 });
      assert.equal((await retain('small', 'b', [{ content: text(20, 'up') }])).status, 200);
      const p = await t.call('GET', '/v1/default/projects/small');
      assert.equal(p.body.effective_limits.characters_per_day, 1000);
      assert.equal(p.body.usage.budgets.characters_per_day, 160);
      await setLimits('small', { characters_per_minute: null, characters_per_day: null });
      assert.equal((await retain('small', 'b', [{ content: text(5000, 'free') }])).status, 200);
    });

    test('entities are charged when known: over the budget is 429 and nothing is stored', async () => {
      await setLimits('other', { entities_per_minute: 3 });
      const entities = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `Person ${i}` }));
      assert.equal(
        (await retain('other', 'ent', [{ content: 'two people', entities: entities(2) }])).status,
        200,
      );
      const r = await retain('other', 'ent', [{ content: 'two more', entities: entities(2) }]);
      assert429(r, 'entities_per_minute', 3, 1);
      const listed = await t.call('GET', me('ent', '/memories'), { token: keys.other });
      assert.equal(listed.body.items.length, 1);
      assert.equal((await usage('other')).entities_per_minute, 2);
    });

    test('Recall and Reflect are charged recall units before any search: 429 with the headers, other projects unaffected', async () => {
      const recall = (body: Record<string, unknown>, project = 'reader') =>
        t.call('POST', me('lib', '/memories/recall'), { token: keys[project], body });
      const units = async () => (await usage('reader')).recall_units_per_minute ?? 0;
      assert.equal((await retain('reader', 'lib', [{ content: 'Alice keeps bees in Lyon.' }])).status, 200);
      assert.equal((await retain('other', 'lib', [{ content: 'Bob keeps goats.' }])).status, 200);
      // What each Recall costs: 1 / 2 / 5 per bank at low / mid / high, +1 per 1,000 query
      // characters, +1 per 10,000 max_tokens.
      const costs: [Record<string, unknown>, number][] = [
        [{ query: 'bees', budget: 'low' }, 1],
        [{ query: 'bees' }, 2],
        [{ query: 'bees', budget: 'high' }, 5],
        [{ query: `bees ${'x'.repeat(2_500)}`, budget: 'low' }, 3],
        [{ query: 'bees', budget: 'low', max_tokens: 25_000 }, 3],
      ];
      for (const [body, cost] of costs) {
        const before = await units();
        const r = await recall(body);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal((await units()) - before, cost, JSON.stringify(body).slice(0, 60));
      }
      // A Reflect pays for its retrieval the same way (mid: 2).
      let before = await units();
      const rf = await t.call('POST', me('lib', '/reflect'), {
        token: keys.reader,
        body: { query: 'bees?' },
      });
      assert.equal(rf.status, 200, JSON.stringify(rf.body));
      assert.equal((await units()) - before, 2);

      clock += 60_000;
      await setLimits('reader', { recall_units_per_minute: 6 });
      for (let i = 0; i < 3; i++) assert.equal((await recall({ query: `bees ${i}` })).status, 200);
      assert429(await recall({ query: 'bees again' }), 'recall_units_per_minute', 6, 0);
      assert429(
        await t.call('POST', me('lib', '/reflect'), { token: keys.reader, body: { query: 'bees?' } }),
        'recall_units_per_minute',
        6,
        0,
      );
      // the same query again would be a cached answer: charged all the same
      assert429(await recall({ query: 'bees 0' }), 'recall_units_per_minute', 6, 0);
      assert.equal(await units(), 6, 'refused Recalls charged nothing');
      // the other tenant, same minute, recalls freely
      for (let i = 0; i < 5; i++) assert.equal((await recall({ query: `goats ${i}` }, 'other')).status, 200);
      // a Recall dearer than the whole budget says so; the next window recovers
      clock += 60_000;
      before = await units();
      const dear = await recall({ query: 'bees', budget: 'high', max_tokens: 20_000 });
      assert429(dear, 'recall_units_per_minute', 6, 6);
      assert.match(dear.body.error.message, /alone costs 7 recall units/);
      assert.equal((await recall({ query: 'bees', budget: 'high' })).status, 200);
      // the day's budget counts every window of the day
      const today = (await usage('reader')).recall_units_per_day!;
      assert.equal(today, 1 + 2 + 5 + 3 + 3 + 2 + 6 + 5);
      await setLimits('reader', { recall_units_per_minute: null, recall_units_per_day: today + 2 });
      assert.equal((await recall({ query: 'bees day' })).status, 200);
      assert429(await recall({ query: 'bees' }), 'recall_units_per_day', today + 2, 0);
      const p = await t.call('GET', '/v1/default/projects/reader');
      assert.equal(p.body.effective_limits.recall_units_per_day, today + 2);
      assert.equal(p.body.effective_limits.recall_units_per_minute, null);
      assert.equal(p.body.usage.budgets.recall_units_per_day, today + 2);
    });

    test('concurrent charges are all or nothing, never pass a budget and never deadlock', async () => {
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'race', name: 'r' } })).status,
        201,
      );
      // Three counters per charge (items and characters per minute, characters per day), the
      // middle one refusing: a refusal gives back the other two while other charges hold them.
      await setLimits('race', { characters_per_minute: 1000, retained_items_per_minute: 1_000_000 });
      for (let round = 0; round < 4; round++) {
        clock += 60_000;
        const outcomes = await Promise.allSettled(
          Array.from({ length: 60 }, () =>
            chargeCost(t.services, 'race', { retained_items: 1, characters: 70 }, 'check'),
          ),
        );
        for (const o of outcomes)
          if (o.status === 'rejected') assert.equal(o.reason.code, 'rate_limited', o.reason);
        assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 14, 'floor(1000 / 70)');
        const u = await usage('race');
        // the refused charges gave back the items they had counted
        assert.deepEqual([u.characters_per_minute, u.retained_items_per_minute], [980, 14]);
        assert.equal(u.characters_per_day, 980 * (round + 1));
      }
    });

    test('model calls are charged before each call: a spent budget is 429 and the model is not called', async () => {
      // The same database served with a model configured (closed with `t`).
      const noModel = t;
      t = await noModel.reconfigured({
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
      });
      try {
        assert.equal((await retain('llm', 'r', [{ content: 'Alice runs marathons.' }])).status, 200);
        await setLimits('llm', { model_calls_per_minute: 2 });
        const before = fake.requests.length;
        for (let i = 0; i < 2; i++) {
          const r = await t.call('POST', me('r', '/reflect'), {
            token: keys.llm,
            body: { query: 'what does Alice do?' },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        const r = await t.call('POST', me('r', '/reflect'), {
          token: keys.llm,
          body: { query: 'and then?' },
        });
        assert429(r, 'model_calls_per_minute', 2, 0);
        assert.equal(fake.requests.length - before, 2, 'the refused Reflect never reached the model');
        const u = await usage('llm');
        assert.equal(u.model_calls_per_minute, 2);
        assert.ok((u.model_tokens_per_minute ?? 0) > 0, 'tokens counted from the provider usage');
        // The tokens a call may cost (its prompt, its longest answer) are charged before it is made:
        // a Reflect whose prompt alone is larger than what is left never reaches the model.
        clock += 60_000;
        await setLimits('llm', { model_calls_per_minute: 100, model_tokens_per_minute: 3000 });
        const sent = fake.requests.length;
        const recallUnits = (await usage('llm')).recall_units_per_minute ?? 0;
        const huge = await t.call('POST', me('r', '/reflect'), {
          token: keys.llm,
          body: { query: 'what does Alice do?', context: 'she trains every morning. '.repeat(700) },
        });
        assert429(huge, 'model_tokens_per_minute', 3000, 3000);
        assert.equal(
          fake.requests.length,
          sent,
          'the Reflect too large for the budget never reached the model',
        );
        const after = await usage('llm');
        assert.equal(after.model_tokens_per_minute ?? 0, 0, 'no model tokens charged for it');
        assert.equal(after.recall_units_per_minute ?? 0, recallUnits, 'its Recall was given back');
        // a call that fits is charged, then set to the tokens the provider reports (not the estimate)
        assert.equal(
          (await t.call('POST', me('r', '/reflect'), { token: keys.llm, body: { query: 'q' } })).status,
          200,
        );
        const spent = (await usage('llm')).model_tokens_per_minute ?? 0;
        assert.ok(
          spent > 0 && spent < 1500,
          `charged the reported tokens, not the ~1,500 estimated: ${spent}`,
        );
        // a token budget already spent refuses the next call too
        await setLimits('llm', { model_tokens_per_minute: spent });
        assert429(
          await t.call('POST', me('r', '/reflect'), { token: keys.llm, body: { query: 'q' } }),
          'model_tokens_per_minute',
          spent,
          0,
        );
        // a Retain whose bank extracts with the model: refused before its first call, nothing stored
        const cfg = await t.call('PATCH', me('r', '/config'), {
          token: keys.llm,
          body: { updates: { retain_extraction_mode: 'concise' } },
        });
        assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
        const calls = fake.requests.length;
        assert429(
          await retain('llm', 'r', [{ content: 'Alice also swims.' }]),
          'model_tokens_per_minute',
          spent,
          0,
        );
        assert.equal(fake.requests.length, calls);
        const listed = await t.call('GET', me('r', '/memories'), { token: keys.llm });
        assert.equal(listed.body.items.length, 1);
      } finally {
        t = noModel;
      }
    });
  });

  describe(`cost budgets: jobs (${engine})`, () => {
    let t: TestApp;
    let fake: FakeOpenAI;
    let worker: Worker;
    // One second before a minute's end: a waiting job's wait (the window's reset, in whole seconds)
    // is one second of real time, the shortest there is.
    let clock = Date.parse('2030-01-01T10:00:59.2Z');

    before(async () => {
      fake = await startFakeOpenAI();
      fake.respond(() => ({
        content: JSON.stringify({
          facts: [
            { text: 'Bob plays chess', fact_type: 'world', entities: [{ text: 'Bob', type: 'PERSON' }] },
          ],
        }),
      }));
      t = await testApp(engine, {
        now: () => new Date(clock),
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
      });
      // Polling every 20 ms, not 500: the job runs as soon as its wait is over.
      worker = t.runtime.startWorker(createLogger('silent'), { pollMs: 20 });
    });
    after(async () => {
      await worker.stop();
      await t.close();
      await fake.close();
    });

    test('a queued Retain of a project over its model budget waits, then runs when the window resets', async () => {
      const bank = 'jobs';
      assert.equal(
        (await t.call('POST', bankPath(bank, '/memories'), { body: { items: [{ content: 'seed' }] } }))
          .status,
        200,
      );
      const cfg = await t.call('PATCH', bankPath(bank, '/config'), {
        body: { updates: { retain_extraction_mode: 'concise', enable_observations: false } },
      });
      assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
      await t.call('PATCH', '/v1/default/projects/default', {
        body: { limits: { model_calls_per_minute: 1 } },
      });
      // The one call of this minute is spent by a synchronous Retain.
      assert.equal(
        (await t.call('POST', bankPath(bank, '/memories'), { body: { items: [{ content: 'Bob' }] } })).status,
        200,
      );
      const calls = fake.requests.length;
      const queued = await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'Bob again' }], async: true },
      });
      assert.equal(queued.status, 200, JSON.stringify(queued.body));
      const opPath = bankPath(bank, `/operations/${queued.body.operation_id}`);
      const waiting = await until(
        () => t.call('GET', opPath),
        (r) => r.body.status === 'pending' && /budget/.test(r.body.error ?? ''),
      );
      assert.match(waiting.body.error, /model_calls_per_minute/);
      assert.equal(fake.requests.length, calls, 'the waiting job did not call the model');
      clock += 1_000; // the next minute
      const done = await until(
        () => t.call('GET', opPath),
        (r) => r.body.status !== 'pending' && r.body.status !== 'processing',
      );
      assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
      assert.equal(fake.requests.length, calls + 1);
      const p = await t.call('GET', '/v1/default/projects/default');
      assert.equal(p.body.usage.budgets.model_calls_per_minute, 1, 'the job charged its model call');
      assert.ok(p.body.usage.budgets.entities_per_minute >= 1, 'and its entities');
      // The minute's call is spent again: a consolidation run waits too, without using an attempt.
      const run = await t.call('POST', bankPath(bank, '/consolidate'));
      assert.ok(run.status < 300, JSON.stringify(run.body));
      const runPath = bankPath(bank, `/operations/${run.body.operation_id}`);
      const parked = await until(
        () => t.call('GET', runPath),
        (r) => r.body.status === 'pending' && /model_calls_per_minute/.test(r.body.error ?? ''),
      );
      assert.equal(parked.body.attempts, 0);
      assert.equal(fake.requests.length, calls + 1);
      assert.equal((await t.call('DELETE', runPath)).status, 200);
    });
  });
}

describe('cost budgets: two app instances on one PostgreSQL', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  test('concurrent Retains through both instances never exceed the budget', async () => {
    const db = await createTestDatabase();
    const open = () => openStore({ databaseUrl: db.url, poolSize: 8 });
    const clock = Date.parse('2030-01-01T10:00:05Z');
    const a = await testApp('postgres', { store: await open(), now: () => new Date(clock) });
    const b = await testApp('postgres', { store: await open(), now: () => new Date(clock) });
    try {
      assert.equal(
        (await a.call('POST', '/v1/default/projects', { body: { id: 'race', name: 'r' } })).status,
        201,
      );
      const key = (
        await a.call('POST', '/v1/default/projects/race/keys', {
          body: { name: 'k', scopes: ['retain', 'recall'] },
        })
      ).body.key;
      // the bank exists first: the race is on the budget only
      assert.equal(
        (
          await a.call('POST', me('bank', '/memories'), {
            token: key,
            body: { items: [{ content: 'seed' }] },
          })
        ).status,
        200,
      );
      await b.call('PATCH', '/v1/default/projects/race', {
        body: { limits: { characters_per_day: 1000 + 4 } }, // the seed's 4 characters are spent
      });
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).call('POST', me('bank', '/memories'), {
            token: key,
            body: { items: [{ content: text(100, `r${i}`) }] },
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      assert.deepEqual(
        statuses.filter((s) => s !== 200 && s !== 429),
        [],
        JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 429)?.body),
      );
      assert.equal(statuses.filter((s) => s === 200).length, 10, 'exactly the budget, never more');
      const p = await a.call('GET', '/v1/default/projects/race');
      assert.equal(p.body.usage.budgets.characters_per_day, 1004);
      const listed = await b.call('GET', me('bank', '/memories?limit=100'), { token: key });
      assert.equal(listed.body.items.length, 11);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});
