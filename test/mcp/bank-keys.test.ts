import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankFiltered } from '../../src/contract/actions.js';
import { createKey } from '../../src/core/projects.js';
import { ADMIN_TOOLS, TOOLS } from '../../src/mcp/server.js';
import { callTool, type ToolContext } from '../../src/mcp/tool.js';
import { ENGINES } from '../helpers/engines.js';
import { call, type McpTestServer, mcpTestServer, textOf } from './helpers.js';

const ALL_SCOPES = ['mcp', 'retain', 'recall', 'graph:read', 'admin'] as const;

for (const engine of ENGINES) {
  describe(`MCP tools with a key scoped to banks (${engine})`, () => {
    let m: McpTestServer;
    let full = '';
    let scoped = '';
    before(async () => {
      m = await mcpTestServer(engine);
      full = await m.key('p1', [...ALL_SCOPES]);
      scoped = (
        await createKey(m.services, 'p1', { name: 's', scopes: [...ALL_SCOPES], banks: ['user-42/*'] })
      ).key;
      const c = await m.client(full);
      for (const bank of ['bob', 'user-42/a', 'user-4/x']) {
        const r = await call(c, 'retain', { bank, items: [{ content: `a memory of ${bank}` }] });
        assert.ok(!r.isError, textOf(r));
      }
    });
    after(() => m.close());

    test('every tool refuses a bank outside the key as not found, or a project-wide call as forbidden', async () => {
      const ctx: ToolContext = {
        services: m.services,
        projectId: 'p1',
        actor: { type: 'key', keyId: 'scopedtest' },
        scopes: 'all',
        banks: ['user-42/*'],
      };
      for (const tool of [...TOOLS, ...ADMIN_TOOLS]) {
        if (!tool.bank && bankFiltered(tool.action)) continue;
        const r = await callTool(ctx, tool, tool.bank ? { bank: 'bob' } : {});
        assert.equal(r.isError, true, tool.name);
        const expected = tool.bank
          ? "not_found: bank 'bob' not found"
          : /^forbidden: .*limited to some banks/;
        if (typeof expected === 'string') assert.equal(textOf(r), expected, tool.name);
        else assert.match(textOf(r), expected, tool.name);
      }
    });

    test('over /mcp: the key reaches its banks only, and list_banks shows only them', async () => {
      const c = await m.client(scoped);
      const listed = await call(c, 'list_banks');
      assert.deepEqual(
        listed.structuredContent.items.map((b: { id: string }) => b.id),
        ['user-42/a'],
      );
      const inside = await call(c, 'recall', { bank: 'user-42/a', query: 'memory' });
      assert.ok(!inside.isError, textOf(inside));
      assert.ok(inside.structuredContent.results.length > 0);
      for (const bank of ['bob', 'user-4/x']) {
        const out = await call(c, 'recall', { bank, query: 'memory' });
        assert.equal(out.isError, true);
        assert.equal(textOf(out), `not_found: bank '${bank}' not found`);
      }
      const write = await call(c, 'retain', { bank: 'mallory', items: [{ content: 'x' }] });
      assert.equal(write.isError, true);
      // Spaces: only those holding one of the key's banks, counting only those.
      const admin = await m.client(full);
      for (const [space, bank] of [
        ['acme', 'bob'],
        ['home', 'user-42/a'],
        ['home', 'user-42/b'],
      ] as const) {
        await call(admin, 'create_space', { id: space, name: space });
        const a = await call(admin, 'attach_bank', { space, bank });
        assert.ok(!a.isError, textOf(a));
      }
      await call(admin, 'attach_bank', { space: 'home', bank: 'user-4/x' });
      const spaces = await call(c, 'list_spaces');
      assert.ok(!spaces.isError, textOf(spaces));
      assert.deepEqual(
        spaces.structuredContent.items.map((s: { id: string; bank_count: number }) => [s.id, s.bank_count]),
        [['home', 2]],
      );
      // The default bank of the connection is checked like a named one.
      const byDefault = await m.client(scoped, 'bob');
      const d = await call(byDefault, 'get_bank');
      assert.equal(textOf(d), "not_found: bank 'bob' not found");
    });
  });
}
