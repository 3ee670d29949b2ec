/**
 * `GET .../llm-requests` and `.../llm-requests/stats`: every model call made for a bank is
 * recorded (purpose, model, tokens, duration, outcome), never its text, and the newest of each
 * bank are kept. Calls go to the fake OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LLM_REQUESTS_KEPT } from '../../src/core/llm-ledger.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const SECRET = 'Caroline keeps her painting studio key under the blue flowerpot';
const FACTS = {
  facts: [{ text: SECRET, fact_type: 'world', entities: [{ text: 'Caroline', type: 'PERSON' }] }],
};

for (const engine of ENGINES) {
  describe(`llm requests (${engine})`, () => {
    let plain: TestApp;
    let t: TestApp;
    let openai: FakeOpenAI;
    before(async () => {
      openai = await startFakeOpenAI();
      plain = await testApp(engine);
      t = await plain.reconfigured({
        llm: createOpenAIModel({ baseUrl: openai.url, model: 'fake-model', maxRetries: 0, timeoutMs: 2000 }),
      });
      assert.equal((await t.call('PUT', bankPath('calls'), { body: {} })).status, 200);
      const cfg = { retain_extraction_mode: 'concise', enable_observations: false };
      assert.equal(
        (await t.call('PATCH', bankPath('calls', '/config'), { body: { updates: cfg } })).status,
        200,
      );
    });
    after(async () => {
      await openai.close();
      await plain.close();
    });

    const list = async (query = '') => {
      const r = await t.call('GET', bankPath('calls', `/llm-requests${query}`));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };

    test('a Retain’s extraction and a Reflect are recorded with their tokens; the bank’s usage is their sum', async () => {
      openai.respond(() => ({ content: JSON.stringify(FACTS) }));
      const r = await t.call('POST', bankPath('calls', '/memories'), {
        body: { items: [{ content: SECRET }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      openai.respond(() => ({ content: 'Under the blue flowerpot.' }));
      const a = await t.call('POST', bankPath('calls', '/reflect'), { body: { query: 'Where is the key?' } });
      assert.equal(a.status, 200, JSON.stringify(a.body));

      const page = await list();
      assert.equal(page.bank_id, 'calls');
      assert.equal(page.total, 2);
      const [reflect, retain] = page.items;
      assert.deepEqual(
        [reflect.operation, reflect.scope, reflect.status, retain.operation, retain.scope, retain.status],
        ['reflect', 'answer', 'success', 'retain', 'extraction', 'success'],
      );
      for (const c of page.items) {
        assert.equal(c.provider, 'openai');
        assert.equal(c.model, 'fake-model');
        assert.ok(c.input_tokens > 0 && c.output_tokens > 0);
        assert.equal(c.total_tokens, c.input_tokens + c.output_tokens);
        assert.ok(c.duration_ms >= 0);
        assert.equal(c.input, null);
        assert.equal(c.output, null);
        assert.equal(c.error, null);
        assert.ok(c.trace_id);
      }
      assert.notEqual(reflect.trace_id, retain.trace_id, 'one trace per unit of work');
      assert.equal(reflect.input_tokens, a.body.usage.input_tokens);
      const usage = (await t.call('GET', bankPath('calls'))).body.llm_usage;
      assert.deepEqual(usage, {
        input_tokens: reflect.input_tokens + retain.input_tokens,
        output_tokens: reflect.output_tokens + retain.output_tokens,
      });
    });

    test('a failed call is recorded with its error kind; filters select by outcome and purpose', async () => {
      openai.respond(() => ({ status: 500 }));
      const a = await t.call('POST', bankPath('calls', '/reflect'), { body: { query: 'Where is the key?' } });
      assert.ok(a.status >= 500, JSON.stringify(a.body));
      const failed = await list('?status=error');
      assert.equal(failed.total, 1);
      assert.deepEqual(
        [
          failed.items[0].operation,
          failed.items[0].status,
          failed.items[0].error,
          failed.items[0].input_tokens,
        ],
        ['reflect', 'error', 'provider_error', 0],
      );
      assert.equal((await list('?operation=retain')).total, 1);
      assert.equal((await list('?operation=reflect&status=success')).total, 1);
      const byTrace = await list(`?trace_id=${failed.items[0].trace_id}`);
      assert.deepEqual(
        byTrace.items.map((c: any) => c.id),
        [failed.items[0].id],
      );
      assert.equal((await list('?start_date=2999-01-01T00:00:00Z')).total, 0);
      openai.respond();
    });

    test('pages by offset and by cursor, newest first', async () => {
      const all = (await list()).items.map((c: any) => c.id);
      assert.equal(all.length, 3);
      const first = await list('?limit=2');
      assert.deepEqual(
        first.items.map((c: any) => c.id),
        all.slice(0, 2),
      );
      assert.ok(first.next_cursor);
      const next = await list(`?limit=2&cursor=${first.next_cursor}`);
      assert.deepEqual(
        next.items.map((c: any) => c.id),
        all.slice(2),
      );
      assert.equal(next.next_cursor, null);
      assert.deepEqual(
        (await list('?limit=2&offset=1')).items.map((c: any) => c.id),
        all.slice(1, 3),
      );
      for (const q of ['?limit=501', '?offset=10001', '?status=maybe', '?start_date=yesterday'])
        assert.equal((await t.call('GET', bankPath('calls', `/llm-requests${q}`))).status, 400, q);
      assert.equal((await t.call('GET', bankPath('nobank', '/llm-requests'))).status, 404);
    });

    test('stats: calls by outcome with tokens per bucket, totals per purpose and outcome', async () => {
      const r = await t.call('GET', bankPath('calls', '/llm-requests/stats?period=1d'));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.trunc, 'hour');
      assert.equal(r.body.buckets.length, 24);
      const items = (await list()).items;
      const sum = (f: (c: any) => number) => items.reduce((a: number, c: any) => a + f(c), 0);
      // Summed over the buckets: the calls above may straddle an hour's end.
      const last = {
        statuses: {} as Record<string, number>,
        total: 0,
        tokens: { input: 0, output: 0, cached: 0, total: 0 },
      };
      for (const b of r.body.buckets) {
        for (const [k, n] of Object.entries(b.statuses as Record<string, number>))
          last.statuses[k] = (last.statuses[k] ?? 0) + n;
        last.total += b.total;
        for (const k of ['input', 'output', 'cached', 'total'] as const) last.tokens[k] += b.tokens[k];
      }
      assert.deepEqual(last.statuses, { success: 2, error: 1 });
      assert.equal(last.total, 3);
      assert.deepEqual(last.tokens, {
        input: sum((c) => c.input_tokens),
        output: sum((c) => c.output_tokens),
        cached: 0,
        total: sum((c) => c.total_tokens),
      });
      const totals = Object.fromEntries(
        r.body.totals.map((x: any) => [`${x.operation}/${x.scope}/${x.status}`, x.calls]),
      );
      assert.deepEqual(totals, {
        'retain/extraction/success': 1,
        'reflect/answer/success': 1,
        'reflect/answer/error': 1,
      });
      const only = await t.call('GET', bankPath('calls', '/llm-requests/stats?operation=retain'));
      assert.equal(only.body.buckets.length, 7);
      assert.equal(only.body.totals.length, 1);
    });

    test('nothing of a prompt or an answer is in the table', async () => {
      const rows = await t.raw.listLlmRequests('default', 'calls', {}, { limit: 100, offset: 0 });
      assert.equal(rows.items.length, 3);
      assert.doesNotMatch(JSON.stringify(rows), /flowerpot|Caroline|key/i);
    });

    test(`the newest calls of a bank are kept (${LLM_REQUESTS_KEPT} in production)`, async () => {
      assert.equal((await t.call('PUT', bankPath('kept'), { body: {} })).status, 200);
      const call = (i: number) => ({
        started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
        operation: 'retain',
        scope: 'extraction',
        provider: 'openai',
        model: 'm',
        status: 'success' as const,
        error: null,
        duration_ms: i,
        input_tokens: 1,
        output_tokens: 2,
        trace_id: null,
      });
      await t.raw.recordLlmCalls('default', 'kept', [call(1), call(2), call(3)], 4);
      await t.raw.recordLlmCalls('default', 'kept', [call(4), call(5)], 4);
      const page = await t.raw.listLlmRequests('default', 'kept', {}, { limit: 10, offset: 0 });
      assert.deepEqual(
        page.items.map((c) => c.duration_ms),
        [5, 4, 3, 2],
      );
      assert.equal(page.total, 4);
      const usage = (await t.call('GET', bankPath('kept'))).body.llm_usage;
      assert.deepEqual(usage, { input_tokens: 5, output_tokens: 10 }, 'every call counted, kept or not');
      // A bank deleted and created again starts a new log.
      assert.equal((await t.call('DELETE', bankPath('kept'))).status, 200);
      assert.equal((await t.call('PUT', bankPath('kept'), { body: {} })).status, 200);
      await t.raw.recordLlmCalls('default', 'kept', [call(6)], 4);
      const again = await t.raw.listLlmRequests('default', 'kept', {}, { limit: 10, offset: 0 });
      assert.deepEqual(
        again.items.map((c) => c.duration_ms),
        [6],
      );
    });
  });
}
