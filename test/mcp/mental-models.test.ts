/**
 * The mental model tools over /mcp: create, list, get, update, refresh and delete through an SDK
 * client; management tools listed to `admin` only; a key limited to some banks reaches the
 * models of those banks only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/core/projects.js';
import { ENGINES } from '../helpers/engines.js';
import { call, type McpTestServer, mcpTestServer, textOf } from './helpers.js';

const ALL_SCOPES = ['mcp', 'retain', 'recall', 'graph:read', 'admin'] as const;
const MANAGE = ['create_mental_model', 'delete_mental_model', 'update_mental_model'];
const BANK = 'user-42/a';

for (const engine of ENGINES) {
  describe(`MCP mental model tools (${engine})`, () => {
    let m: McpTestServer;
    let admin = '';
    before(async () => {
      m = await mcpTestServer(engine);
      admin = await m.key('p1', [...ALL_SCOPES]);
      const c = await m.client(admin);
      const r = await call(c, 'retain', { bank: BANK, items: [{ content: 'Alice runs every morning.' }] });
      assert.ok(!r.isError, textOf(r));
    });
    after(() => m.close());

    test('create, list, get, update, refresh, delete', async () => {
      const c = await m.client(admin, BANK);
      const made = await call(c, 'create_mental_model', {
        id: 'training',
        name: 'Training',
        source_query: 'How does Alice train?',
        tags: ['fitness'],
      });
      assert.ok(!made.isError, textOf(made));
      assert.equal(made.structuredContent.mental_model_id, 'training');
      assert.match(made.structuredContent.operation_id, /^[0-9a-f-]{36}$/);
      assert.match(textOf(made), /Created mental model training "Training"/);
      const dup = await call(c, 'create_mental_model', { id: 'training', name: 'T', source_query: 'q' });
      assert.match(textOf(dup), /^conflict: /);

      const list = await call(c, 'list_mental_models', { detail: 'metadata' });
      assert.deepEqual(
        list.structuredContent.items.map((x: any) => [x.id, x.name, x.tags]),
        [['training', 'Training', ['fitness']]],
      );
      assert.match(textOf(list), /- training "Training" \(refresh pending\)/);

      const got = await call(c, 'get_mental_model', { mental_model_id: 'training' });
      assert.equal(got.structuredContent.source_query, 'How does Alice train?');
      assert.match(textOf(got), /Question: How does Alice train\?/);

      const updated = await call(c, 'update_mental_model', {
        mental_model_id: 'training',
        source_query: 'When does Alice run?',
      });
      assert.ok(!updated.isError, textOf(updated));
      assert.equal(updated.structuredContent.source_query, 'When does Alice run?');
      assert.equal(updated.structuredContent.name, 'Training', 'left out: kept');

      const refresh = await call(c, 'refresh_mental_model', { mental_model_id: 'training' });
      assert.ok(!refresh.isError, textOf(refresh));
      assert.equal(refresh.structuredContent.operation.kind, 'refresh_mental_model');

      const gone = await call(c, 'delete_mental_model', { mental_model_id: 'training' });
      assert.deepEqual(gone.structuredContent, { success: true, deleted: true, id: 'training' });
      const missing = await call(c, 'get_mental_model', { mental_model_id: 'training' });
      assert.equal(textOf(missing), "not_found: mental model 'training' not found");
      const audit = await m.services.store.listAudit('p1', { action: 'mental_models.create' }, { limit: 10 });
      assert.deepEqual(audit.items.map((e) => [e.status, e.bank_id]).sort(), [
        [200, BANK],
        [409, BANK],
      ]);
    });

    test('without admin: the management tools are not listed and refuse; reading and refreshing work', async () => {
      const c = await m.client(admin, BANK);
      await call(c, 'create_mental_model', {
        id: 'habits',
        name: 'Habits',
        source_query: 'What are Alice’s habits?',
      });
      const reader = await m.client(await m.key('p1', ['mcp', 'recall', 'retain']), BANK);
      const names = (await reader.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('get_mental_model') && names.includes('refresh_mental_model'));
      assert.deepEqual(
        names.filter((n) => MANAGE.includes(n)),
        [],
      );
      const create = await call(reader, 'create_mental_model', { name: 'X', source_query: 'q' });
      assert.equal(create.isError, true);
      assert.equal((await call(reader, 'list_mental_models')).structuredContent.items[0].id, 'habits');
      assert.ok(!(await call(reader, 'refresh_mental_model', { mental_model_id: 'habits' })).isError);
      // recall alone reads but does not refresh (a refresh writes: the retain scope).
      const recallOnly = await m.client(await m.key('p1', ['mcp', 'recall']), BANK);
      const refused = await call(recallOnly, 'refresh_mental_model', { mental_model_id: 'habits' });
      assert.match(textOf(refused), /^forbidden: .*'retain' scope/);
    });

    test('a key limited to some banks reaches the models of those banks only', async () => {
      const c = await m.client(admin);
      await call(c, 'retain', { bank: 'bob', items: [{ content: 'Bob keeps a secret.' }] });
      const secret = await call(c, 'create_mental_model', {
        bank: 'bob',
        id: 'secret',
        name: 'S',
        source_query: 'q?',
      });
      assert.ok(!secret.isError, textOf(secret));
      const scoped = (
        await createKey(m.services, 'p1', { name: 's', scopes: [...ALL_SCOPES], banks: ['user-42/*'] })
      ).key;
      const s = await m.client(scoped);
      const mine = await call(s, 'list_mental_models', { bank: BANK });
      assert.ok(!mine.isError, textOf(mine));
      for (const name of [
        'list_mental_models',
        'get_mental_model',
        'refresh_mental_model',
        'delete_mental_model',
      ]) {
        const r = await call(s, name, { bank: 'bob', mental_model_id: 'secret' });
        assert.equal(textOf(r), "not_found: bank 'bob' not found", name);
      }
      const made = await call(s, 'create_mental_model', { bank: 'bob', name: 'X', source_query: 'q?' });
      assert.equal(textOf(made), "not_found: bank 'bob' not found");
      assert.equal((await call(c, 'list_mental_models', { bank: 'bob' })).structuredContent.total, 1);
    });
  });
}
