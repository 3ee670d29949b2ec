import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { call, type McpTestServer, mcpTestServer, textOf } from './helpers.js';

const BANK = 'alice@example.com';
const MEMORY_TOOLS = [
  'delete_memory',
  'get_bank',
  'get_mental_model',
  'list_banks',
  'list_entities',
  'list_memories',
  'list_mental_models',
  'recall',
  'reflect',
  'refresh_mental_model',
  'retain',
];
const ADMIN_TOOLS = [
  'attach_bank',
  'create_mental_model',
  'create_space',
  'delete_mental_model',
  'list_spaces',
  'remove_bank',
  'update_mental_model',
];

/** A raw JSON-RPC POST to /mcp, for what an SDK client would not show: statuses and error bodies. */
async function post(
  url: string,
  token: string | null,
  body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

for (const engine of ENGINES) {
  describe(`MCP over streamable HTTP (${engine})`, () => {
    let m: McpTestServer;
    let full = '';
    before(async () => {
      m = await mcpTestServer(engine);
      full = await m.key('p1', ['mcp', 'retain', 'recall', 'graph:read']);
    });
    after(() => m.close());

    test('tool arguments with a __proto__ member are a 400, not silently dropped', async () => {
      const metadata = JSON.parse('{"__proto__": {"session_id": "s"}}');
      const r = await post(m.url, full, {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'retain', arguments: { bank: 'proto-mcp', items: [{ content: 'x', metadata }] } },
      });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'validation_error');
      assert.match(r.body.error.message, /__proto__/);
    });

    test('an SDK client lists the tools, retains and recalls', async () => {
      const c = await m.client(full);
      const { tools } = await c.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), MEMORY_TOOLS);
      const retainTool = tools.find((t) => t.name === 'retain')!;
      assert.deepEqual(retainTool.inputSchema.required?.sort(), ['bank', 'items']);
      assert.ok(retainTool.outputSchema, 'tools declare their output schema');
      assert.match(retainTool.description ?? '', /'retain' scope/);

      const stored = await call(c, 'retain', {
        bank: BANK,
        items: [
          {
            content: 'Alice adopted a beagle named Pepper',
            timestamp: '2024-05-08T13:56:00Z',
            tags: ['pets'],
          },
          { content: 'Alice works as a nurse at the county hospital' },
        ],
      });
      assert.equal(stored.isError, undefined, textOf(stored));
      assert.equal(stored.structuredContent.memories_created, 2);
      assert.equal(stored.structuredContent.memory_ids.length, 2);
      assert.match(textOf(stored), /Stored 2 memories/);

      const found = await call(c, 'recall', { bank: BANK, query: "What is the name of Alice's dog?" });
      assert.equal(found.isError, undefined, textOf(found));
      const top = found.structuredContent.results[0];
      assert.match(top.text, /Pepper/);
      assert.equal(top.bank_id, BANK);
      assert.equal(typeof top.scores.final, 'number');
      assert.equal(found.structuredContent.usage.max_tokens, 2048);
      assert.match(
        textOf(found),
        /^\d+ memor(y|ies) \(\d+ of 2048 tokens\):\n1\. \[\w+\] Alice adopted a beagle named Pepper/,
      );
      assert.match(textOf(found), /happened|noted 2024-05-08/);
    });

    test('the other tools answer with structured content matching their output schemas', async () => {
      const c = await m.client(full);
      await call(c, 'retain', {
        bank: 'bob',
        items: [{ content: 'Bob met Carol in Lisbon', entities: [{ text: 'Carol', type: 'PERSON' }] }],
      });
      // The SDK client validates structuredContent against each tool's outputSchema and throws on a mismatch.
      const reflected = await call(c, 'reflect', { bank: 'bob', query: 'Who did Bob meet?' });
      assert.equal(reflected.isError, undefined, textOf(reflected));
      assert.equal(reflected.structuredContent.mode, 'extractive');
      assert.match(textOf(reflected), /Carol/);

      const page = await call(c, 'list_memories', { bank: 'bob', limit: 10 });
      assert.equal(page.structuredContent.items.length, 1);
      assert.equal(page.structuredContent.next_cursor, null);
      assert.match(textOf(page), /Bob met Carol in Lisbon/);

      const profile = await call(c, 'get_bank', { bank: 'bob' });
      assert.equal(profile.structuredContent.id, 'bob');
      assert.equal(profile.structuredContent.memory_count, 1);

      const banks = await call(c, 'list_banks', {});
      const ids = banks.structuredContent.items.map((b: any) => b.id);
      assert.ok(ids.includes('bob') && ids.includes(BANK), ids.join());

      const entities = await call(c, 'list_entities', { bank: 'bob' });
      assert.equal(entities.isError, undefined, textOf(entities));
      assert.ok(entities.structuredContent.items.some((e: any) => e.name === 'Carol'));

      const id = page.structuredContent.items[0].id;
      const deleted = await call(c, 'delete_memory', { bank: 'bob', id });
      const { receipt, ...gone } = deleted.structuredContent as { receipt: { subject: unknown } };
      assert.deepEqual(gone, { deleted: true, id });
      assert.deepEqual(receipt.subject, { kind: 'memory', bank_id: 'bob', id });
      const again = await call(c, 'delete_memory', { bank: 'bob', id });
      assert.equal(again.isError, true);
      assert.match(textOf(again), /^not_found: memory/);
      assert.equal((await call(c, 'list_memories', { bank: 'bob' })).structuredContent.items.length, 0);
    });

    test('core errors and bad arguments come back as tool errors a model can read', async () => {
      const c = await m.client(full);
      const missing = await call(c, 'recall', { bank: 'nobody', query: 'anything' });
      assert.equal(missing.isError, true);
      assert.equal(missing.structuredContent, undefined);
      assert.equal(textOf(missing), "not_found: bank 'nobody' not found");

      const empty = await call(c, 'retain', { bank: BANK, items: [] });
      assert.equal(empty.isError, true);
      assert.match(textOf(empty), /items/);

      const noBank = await call(c, 'recall', { query: 'x' });
      assert.equal(noBank.isError, true);
      assert.match(textOf(noBank), /bank/);

      const badBank = await call(c, 'retain', { bank: ' padded ', items: [{ content: 'x' }] });
      assert.equal(badBank.isError, true);
      assert.match(textOf(badBank), /^validation_error: bank id must not start or end with white space/);
    });

    test('no key is 401, a key without the mcp scope is 403 naming it', async () => {
      const none = await post(m.url, null);
      assert.equal(none.status, 401);
      assert.equal(none.body.error.code, 'unauthenticated');
      assert.equal((await post(m.url, 'mk_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB')).status, 401);
      assert.equal((await post(m.url, 'not-the-admin-token')).status, 401);

      const noMcp = await m.key('p1', ['retain', 'recall', 'graph:read', 'admin']);
      const denied = await post(m.url, noMcp);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'forbidden');
      assert.equal(denied.body.error.required_scope, 'mcp');
      assert.match(denied.body.error.message, /'mcp'/);
      await assert.rejects(m.client(noMcp), /forbidden.*'mcp' scope/);

      const audit = await m.services.store.listAudit('p1', { action: 'mcp' }, { limit: 10 });
      assert.ok(audit.items.some((e) => e.status === 403 && e.actor.key_id === noMcp.split('_')[1]));
    });

    test('a key with mcp but not retain cannot call the retain tool', async () => {
      const readOnly = await m.key('p1', ['mcp', 'recall']);
      const c = await m.client(readOnly);
      const r = await call(c, 'retain', { bank: 'ro-bank', items: [{ content: 'should not be stored' }] });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /^forbidden: this key lacks the 'retain' scope/);
      assert.match(textOf(r), /required scope: retain/);
      assert.equal(await m.services.store.getBank('p1', 'ro-bank'), null, 'nothing was written');
      // Its recall scope still works; entities need graph:read.
      assert.equal((await call(c, 'recall', { bank: BANK, query: 'dog' })).isError, undefined);
      const graph = await call(c, 'list_entities', { bank: BANK });
      assert.match(textOf(graph), /'graph:read' scope/);
      const del = await call(c, 'delete_memory', { bank: BANK, id: '00000000-0000-0000-0000-000000000000' });
      assert.match(textOf(del), /'retain' scope/);

      const audit = await m.services.store.listAudit('p1', { action: 'memories.retain' }, { limit: 50 });
      assert.ok(
        audit.items.some((e) => e.status === 403 && e.bank_id === 'ro-bank'),
        'the refusal is audited',
      );
    });

    test("a key of another project cannot see this project's bank", async () => {
      const other = await m.key('p2', ['mcp', 'retain', 'recall', 'graph:read', 'admin']);
      const c = await m.client(other);
      const r = await call(c, 'recall', { bank: BANK, query: 'dog' });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /^not_found: bank/);
      assert.equal((await call(c, 'get_bank', { bank: BANK })).isError, true);
      assert.equal((await call(c, 'list_memories', { bank: BANK })).isError, true);
      assert.deepEqual((await call(c, 'list_banks')).structuredContent.items, []);
      // Writing the same bank id makes a separate bank of p2; p1's memories stay out of reach.
      await call(c, 'retain', { bank: BANK, items: [{ content: 'Alice of project two likes tea' }] });
      const mine = await call(c, 'recall', { bank: BANK, query: 'dog Pepper' });
      assert.ok(mine.structuredContent.results.every((x: any) => !/Pepper/.test(x.text)));
    });

    test('operator token: project default, space tools listed and working', async () => {
      const c = await m.client(ADMIN);
      const names = (await c.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, [...MEMORY_TOOLS, ...ADMIN_TOOLS].sort());
      assert.equal(
        (await call(c, 'create_space', { id: 'acme', name: 'Acme' })).structuredContent.id,
        'acme',
      );
      const dup = await call(c, 'create_space', { id: 'acme', name: 'Acme' });
      assert.match(textOf(dup), /^conflict: /);
      const att = await call(c, 'attach_bank', { space: 'acme', bank: 'carol' });
      assert.deepEqual(att.structuredContent, { space_id: 'acme', bank_id: 'carol', attached: true });
      const spaces = await call(c, 'list_spaces');
      assert.deepEqual(
        spaces.structuredContent.items.map((s: any) => [s.id, s.bank_count]),
        [['acme', 1]],
      );
      const inSpace = await call(c, 'list_banks', { space: 'acme' });
      assert.deepEqual(
        inSpace.structuredContent.items.map((b: any) => b.id),
        ['carol'],
      );
      const rem = await call(c, 'remove_bank', { space: 'acme', bank: 'carol' });
      assert.equal(rem.structuredContent.attached, false);
      // Project default: p1's banks are not here.
      assert.ok((await call(c, 'list_banks')).structuredContent.items.every((b: any) => b.id !== BANK));
      const audit = await m.services.store.listAudit('default', { action: 'spaces.create' }, { limit: 10 });
      assert.deepEqual(audit.items.map((e) => e.status).sort(), [200, 409]);
      assert.equal(audit.items[0]?.actor.type, 'operator');
    });

    test('space tools are not listed without admin, and refuse if called anyway', async () => {
      const c = await m.client(full);
      const r = await call(c, 'list_spaces');
      assert.equal(r.isError, true);
      assert.match(textOf(r), /list_spaces/);
    });

    test('?bank= sets a default bank: the argument becomes optional', async () => {
      const c = await m.client(full, 'dana');
      const retainTool = (await c.listTools()).tools.find((t) => t.name === 'retain')!;
      assert.deepEqual(retainTool.inputSchema.required, ['items']);
      assert.match(await c.getInstructions()!, /bank 'dana'/);
      await call(c, 'retain', { items: [{ content: 'Dana plays the cello in a quartet' }] });
      const r = await call(c, 'recall', { query: 'What instrument does Dana play?' });
      assert.match(r.structuredContent.results[0].text, /cello/);
      assert.equal(r.structuredContent.results[0].bank_id, 'dana');
      // An explicit bank still wins.
      const other = await call(c, 'recall', { bank: BANK, query: 'cello' });
      assert.ok(other.structuredContent.results.every((x: any) => x.bank_id === BANK));
      const bad = await fetch(`${m.url}/mcp?bank=${encodeURIComponent(' x')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${full}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(bad.status, 400);
    });

    test("requests to /mcp count against the project's rate limit", async () => {
      const key = await m.key('p3', ['mcp', 'recall']);
      const patch = await fetch(`${m.url}/v1/default/projects/p3`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ limits: { requests_per_minute: 2 } }),
      });
      assert.equal(patch.status, 200);
      // Five requests over a limit of two: even split across a minute boundary, one window sees three.
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await post(m.url, key)).status);
      assert.ok(statuses.includes(429), statuses.join());
      assert.ok(
        statuses.every((x) => x === 200 || x === 429),
        statuses.join(),
      );
    });

    test('GET and DELETE are 405 (stateless: no stream, no session)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${m.url}/mcp`, { method, headers: { authorization: `Bearer ${full}` } });
        assert.equal(res.status, 405);
        assert.equal(res.headers.get('allow'), 'POST');
      }
    });
  });
}
