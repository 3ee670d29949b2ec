/**
 * Red team 3 (issue 18): attacks on what earlier rounds left alone, as a hostile tenant with a
 * valid key of its own project. Each test is the attack; docs/security.md "Red team 3" lists the
 * figures before and after, and what held.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { type TestApp, testApp } from '../helpers/app.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

for (const engine of ENGINES) {
  describe(`red team 3 (${engine})`, () => {
    let t: TestApp;
    // Fixed windows: moving the clock past the minute's end is waiting for the reset.
    let clock = Date.parse('2030-01-01T10:00:05Z');
    const keys: Record<string, string> = {};

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      for (const p of ['rt3-batch']) {
        const made = await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } });
        assert.equal(made.status, 201);
        const k = await t.call('POST', `/v1/default/projects/${p}/keys`, {
          body: { name: 'k', scopes: ['retain', 'recall', 'mcp'] },
        });
        assert.equal(k.status, 201);
        keys[p] = k.body.key as string;
      }
    });
    after(() => t.close());

    test('a JSON-RPC batch of MCP tool calls counts each call against the requests per minute', async () => {
      const p = 'rt3-batch';
      const limit = 5;
      const r = await t.call('PATCH', `/v1/default/projects/${p}`, {
        body: { limits: { requests_per_minute: limit } },
      });
      assert.equal(r.status, 200);
      const call = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'retain',
          arguments: { bank: 'b', items: [{ content: `batched fact number ${id}` }] },
        },
      });
      // One HTTP request, 40 tool calls: 8 times the minute's limit.
      const batch = await t.call('POST', '/mcp', {
        token: keys[p],
        headers: MCP_HEADERS,
        body: Array.from({ length: 40 }, (_, i) => call(i + 1)),
      });
      assert.equal(batch.status, 429, JSON.stringify(batch.body).slice(0, 300));
      assert.equal(batch.body.error.limit, 'requests_per_minute');
      assert.equal(await t.services.store.getBank(p, 'b'), null, 'no call of the refused batch ran');
      // Within the limit a batch still runs (the next minute: the refused calls were counted).
      clock += 60_000;
      const small = await t.call('POST', '/mcp', {
        token: keys[p],
        headers: MCP_HEADERS,
        body: [call(1), call(2), call(3)],
      });
      assert.equal(small.status, 200, JSON.stringify(small.body).slice(0, 300));
      assert.equal(small.body.length, 3);
      const page = await t.call('GET', '/v1/me/banks/b/memories', { token: keys[p] });
      assert.equal(page.status, 200);
      assert.equal(page.body.items.length, 3);
    });
  });
}
