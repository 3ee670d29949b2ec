/**
 * Requests refused after their charge, written as the attack: a tenant sends, again and again,
 * requests that pass the budget check and are then refused (a space that does not exist, an org
 * bank without its space, an operation id already used, a spent entity or model budget). Each
 * must cost the project nothing: its budgets and its items of the day are as before, and a
 * legitimate request afterwards is not a 429.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildArchive } from '../../src/core/transfer/archive.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { projectWithKey } from '../helpers/keys.js';
import { projectUsage, setProjectLimits } from '../helpers/project-usage.js';
import { ENGINES } from '../helpers/engines.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');
/** Enough times to spend each budget below several times over, were the charges kept. */
const TIMES = 8;

const archive = buildArchive({
  manifest: { schema_version: 1, source_bank_id: 'elsewhere', exported_at: null },
  documents: [{ id: 'doc', facts: [{ text: `An imported fact ${'y'.repeat(80)}.`, fact_type: 'world' }] }],
  loose: [],
});

for (const engine of ENGINES) {
  describe(`requests refused after their charge cost nothing (${engine})`, () => {
    let t: TestApp;
    let fake: FakeOpenAI;
    // Each test starts a new minute, so that one's budget does not decide the next.
    let clock = Date.parse('2030-01-01T10:00:05Z');
    let key = '';
    const project = 'refused';
    const setLimits = (limits: Record<string, number | null>) => setProjectLimits(t, project, limits);
    const usage = (app = t) => projectUsage(app, project);
    const retain = (path: string, items: unknown[], extra: Record<string, unknown> = {}) =>
      t.call('POST', path, { token: key, body: { items, ...extra } });
    const form = (path: string, name: string, part: Blob, filename: string) => {
      const f = new FormData();
      f.append(name, part, filename);
      return t.app.request(path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: f });
    };
    /** An item of exactly 100 characters. */
    const item = (tag: string) => ({ content: `${tag} ${'x'.repeat(99 - tag.length)}` });

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      fake = await startFakeOpenAI();
      key = await projectWithKey(t, project);
      // A few refused requests' worth: kept charges would turn the later ones into 429s.
      await setLimits({
        characters_per_minute: 350,
        retained_items_per_minute: 3,
        retained_items_per_day: 20,
        entities_per_minute: 1,
        recall_units_per_minute: 1000,
        model_calls_per_minute: 100,
      });
    });
    after(async () => {
      await t.close();
      await fake.close();
    });

    test('Retains into a space, or an org bank, that does not exist: 404 each time, nothing charged', async () => {
      clock += 60_000;
      const before = await usage();
      for (let i = 0; i < TIMES; i++) {
        for (const async of [false, true]) {
          const r = await retain(`${me('nowhere', '/memories')}?space=missing`, [item(`a${i}`)], { async });
          assert.equal(r.status, 404, `${i} async=${async}: ${JSON.stringify(r.body)}`);
          const org = await retain(me('__org__:gone', '/memories'), [item(`o${i}`)], { async });
          assert.equal(org.status, 404, `${i} async=${async}: ${JSON.stringify(org.body)}`);
        }
        const up = await form(
          `${me('nowhere', '/files/retain')}?space=missing`,
          'files',
          new Blob([item(`f${i}`).content], { type: 'text/plain' }),
          `f${i}.txt`,
        );
        assert.equal(up.status, 404, await up.text());
        const imp = await form(
          me('__org__:gone', '/document-transfer'),
          'file',
          new Blob([new Uint8Array(archive)], { type: 'application/zip' }),
          'archive.zip',
        );
        assert.equal(imp.status, 404, await imp.text());
      }
      assert.deepEqual(await usage(), before);
      const ok = await retain(me('real', '/memories'), [item('legit')]);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const u = await usage();
      assert.equal(u.characters_per_minute, before.characters_per_minute! + 100);
      assert.equal(u.retained_items_today, before.retained_items_today! + 1);
    });

    test('an async Retain repeated with its operation id returns the first operation and is charged once', async () => {
      clock += 60_000;
      const operation_id = '0b6f2b5e-7d1c-4c1e-9a37-2f4f3c2d1e10';
      const before = await usage();
      const first = await retain(me('real', '/memories'), [item('once')], { async: true, operation_id });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      for (let i = 0; i < TIMES; i++) {
        const again = await retain(me('real', '/memories'), [item('once')], { async: true, operation_id });
        assert.equal(again.status, 200, `${i}: ${JSON.stringify(again.body)}`);
        assert.equal(again.body.operation_id, first.body.operation_id);
      }
      const u = await usage();
      assert.equal(u.characters_per_minute, before.characters_per_minute! + 100);
      assert.equal(u.retained_items_per_minute, before.retained_items_per_minute! + 1);
      assert.equal(u.retained_items_today, before.retained_items_today! + 1);
    });

    test('a Retain refused by the entity budget once its entities are extracted keeps no item or character charge', async () => {
      clock += 60_000;
      fake.respond(() => ({
        content: JSON.stringify({
          facts: [
            {
              text: 'Alice met Bob',
              fact_type: 'world',
              entities: [
                { text: 'Alice', type: 'PERSON' },
                { text: 'Bob', type: 'PERSON' },
              ],
            },
          ],
        }),
      }));
      const w = await t.reconfigured({
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
      });
      try {
        assert.equal((await w.call('PUT', me('people'), { token: key, body: {} })).status, 200);
        const cfg = await w.call('PATCH', me('people', '/config'), {
          token: key,
          body: { updates: { retain_extraction_mode: 'concise' } },
        });
        assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
        const before = await usage(w);
        for (let i = 0; i < TIMES; i++) {
          const r = await w.call('POST', me('people', '/memories'), {
            token: key,
            body: { items: [item(`e${i}`)] },
          });
          assert.equal(r.status, 429, `${i}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error.limit, 'entities_per_minute');
        }
        const u = await usage(w);
        for (const name of ['retained_items_per_minute', 'characters_per_minute', 'entities_per_minute'])
          assert.equal(u[name], before[name], name);
        assert.equal(u.retained_items_today, before.retained_items_today);
        // The model calls were made: they stay charged.
        assert.equal(u.model_calls_per_minute, before.model_calls_per_minute! + TIMES);
        const listed = await w.call('GET', me('people', '/memories'), { token: key });
        assert.deepEqual(listed.body.items ?? [], []);
      } finally {
        await w.close();
      }
    });

    test('a Reflect with the model budget spent is 429 before its Recall is charged', async () => {
      clock += 60_000;
      const w = await t.reconfigured({
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
      });
      try {
        // The minute's one model call spent by a Reflect that is answered.
        await setLimits({ model_calls_per_minute: 1 });
        const stored = await retain(me('thinking', '/memories'), [{ content: 'Alice runs marathons.' }]);
        assert.equal(stored.status, 200, JSON.stringify(stored.body));
        const spent = await w.call('POST', me('thinking', '/reflect'), {
          token: key,
          body: { query: 'what?' },
        });
        assert.equal(spent.status, 200, JSON.stringify(spent.body));
        const before = await usage(w);
        const calls = fake.requests.length;
        for (let i = 0; i < TIMES; i++) {
          const r = await w.call('POST', me('thinking', '/reflect'), {
            token: key,
            body: { query: `what ${i}?` },
          });
          assert.equal(r.status, 429, `${i}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error.limit, 'model_calls_per_minute');
        }
        assert.equal(fake.requests.length, calls, 'the model was never called');
        assert.deepEqual(await usage(w), before);
      } finally {
        await w.close();
      }
    });
  });
}
