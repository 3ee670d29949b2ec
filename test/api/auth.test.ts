import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCOPES } from '../../src/core/types.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { wrongSecret } from '../helpers/keys.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

/** Every `/v1/me` endpoint with the scope decisions.md assigns to it. */
const MATRIX: { method: string; path: string; body?: unknown; scope: string }[] = [
  {
    method: 'POST',
    path: me('m', '/memories'),
    body: { items: [{ content: 'matrix memory' }] },
    scope: 'retain',
  },
  { method: 'POST', path: me('m', '/memories/recall'), body: { query: 'matrix' }, scope: 'recall' },
  { method: 'POST', path: me('m', '/reflect'), body: { query: 'matrix' }, scope: 'recall' },
  { method: 'GET', path: me('m', '/memories'), scope: 'recall' },
  { method: 'DELETE', path: me('m', '/memories/00000000-0000-0000-0000-000000000000'), scope: 'retain' },
  { method: 'GET', path: '/v1/me/spaces', scope: 'admin' },
  { method: 'POST', path: '/v1/me/spaces', body: { id: 'matrix-space', name: 'M' }, scope: 'admin' },
  { method: 'GET', path: '/v1/me/spaces/matrix-space/banks', scope: 'admin' },
  { method: 'PUT', path: '/v1/me/spaces/matrix-space/banks/m2', scope: 'admin' },
  { method: 'DELETE', path: '/v1/me/spaces/matrix-space/banks/m2', scope: 'admin' },
  { method: 'GET', path: me('m'), scope: 'recall' },
  { method: 'GET', path: me('m', '/config'), scope: 'recall' },
  {
    method: 'PATCH',
    path: me('m', '/config'),
    body: { updates: { disposition_empathy: 4 } },
    scope: 'admin',
  },
  { method: 'GET', path: me('m', '/entities'), scope: 'graph:read' },
  { method: 'GET', path: me('m', '/evaluations'), scope: 'recall' },
  { method: 'DELETE', path: me('m', '/evaluations/00000000-0000-0000-0000-000000000000'), scope: 'admin' },
  { method: 'GET', path: '/v1/me/audit', scope: 'admin' },
  { method: 'DELETE', path: '/v1/me/spaces/matrix-space', scope: 'admin' },
  { method: 'DELETE', path: me('m'), scope: 'admin' },
];

for (const engine of ENGINES) {
  describe(`auth, keys and scopes (${engine})`, () => {
    let t: TestApp;
    const keys: Record<string, string> = {};
    let allKey = '';
    before(async () => {
      t = await testApp(engine);
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'p1', name: 'Project one' } })).status,
        201,
      );
      for (const scope of SCOPES) {
        const r = await t.call('POST', '/v1/default/projects/p1/keys', {
          body: { name: scope, scopes: [scope] },
        });
        assert.equal(r.status, 201);
        keys[scope] = r.body.key;
      }
      allKey = (
        await t.call('POST', '/v1/default/projects/p1/keys', { body: { name: 'all', scopes: [...SCOPES] } })
      ).body.key;
    });
    after(() => t.close());

    test('key creation shows the secret once; listings never do', async () => {
      const r = await t.call('POST', '/v1/default/projects/p1/keys', {
        body: { name: 'ci', scopes: ['recall'], expires_at: '2999-01-01T00:00:00Z' },
      });
      assert.equal(r.status, 201);
      assert.match(r.body.key, /^mk_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{32,}$/);
      assert.deepEqual(Object.keys(r.body).sort(), [
        'banks',
        'created_at',
        'expires_at',
        'id',
        'key',
        'name',
        'project_id',
        'revoked_at',
        'scopes',
      ]);
      const list = await t.call('GET', '/v1/default/projects/p1/keys');
      assert.equal(list.status, 200);
      const text = JSON.stringify(list.body);
      // The secret is everything after `mk_<id>_`; it may itself contain `_`.
      const secret = r.body.key.slice('mk_'.length + 12 + 1);
      assert.ok(secret.length >= 32, 'the secret part of the key');
      assert.ok(!text.includes(secret), 'the secret appears in the listing');
      assert.ok(list.body.items.every((k: any) => !('key' in k) && !('secret_hash' in k)));
    });

    test('missing, malformed, unknown and wrong keys are 401', async () => {
      for (const token of [
        null,
        'garbage',
        'mk_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
        wrongSecret(allKey),
      ]) {
        const r = await t.call('GET', '/v1/me/spaces', { token });
        assert.equal(r.status, 401, String(token));
        assert.equal(r.body.error.code, 'unauthenticated');
      }
      const r = await t.call('GET', '/v1/default/spaces', { token: 'wrong-admin-token' });
      assert.equal(r.status, 401);
      assert.equal((await t.call('GET', '/v1/default/spaces', { token: null })).status, 401);
    });

    test('each scope opens exactly its endpoints (403 names the missing scope)', async () => {
      for (const row of MATRIX) {
        for (const scope of SCOPES) {
          const r = await t.call(row.method, row.path, { body: row.body, token: keys[scope] });
          if (scope === row.scope) {
            assert.notEqual(r.status, 403, `${scope} should open ${row.method} ${row.path}`);
            assert.notEqual(r.status, 401);
          } else {
            assert.equal(r.status, 403, `${scope} should not open ${row.method} ${row.path}: ${r.status}`);
            assert.equal(r.body.error.code, 'forbidden');
            assert.equal(r.body.error.required_scope, row.scope);
          }
        }
      }
    });

    test("projects are isolated: another project's bank is 404", async () => {
      await t.call('POST', '/v1/default/projects', { body: { id: 'p2', name: 'Project two' } });
      const k2 = (
        await t.call('POST', '/v1/default/projects/p2/keys', { body: { name: 'k', scopes: [...SCOPES] } })
      ).body.key;
      const w = await t.call('POST', me('secret-bank', '/memories'), {
        token: allKey,
        body: { items: [{ content: 'p1 private fact' }] },
      });
      assert.equal(w.status, 200);
      assert.equal((await t.call('GET', me('secret-bank'), { token: k2 })).status, 404);
      const rec = await t.call('POST', me('secret-bank', '/memories/recall'), {
        token: k2,
        body: { query: 'private fact' },
      });
      assert.equal(rec.status, 404);
      // the same bank id in p2 is a different bank
      await t.call('POST', me('secret-bank', '/memories'), {
        token: k2,
        body: { items: [{ content: 'p2 own fact' }] },
      });
      const mine = await t.call('GET', me('secret-bank', '/memories'), { token: k2 });
      assert.deepEqual(
        mine.body.items.map((m: any) => m.text),
        ['p2 own fact'],
      );
      // and neither shows through the operator surface of the default project
      assert.equal((await t.call('GET', bankPath('secret-bank'))).status, 404);
      // a p1 key cannot use /v1/default
      assert.equal((await t.call('GET', '/v1/default/spaces', { token: allKey })).status, 401);
    });

    test('a key of the default project works on /v1/default with its scopes', async () => {
      const k = (
        await t.call('POST', '/v1/default/projects/default/keys', { body: { name: 'd', scopes: ['recall'] } })
      ).body.key;
      await t.call('POST', bankPath('dflt', '/memories'), {
        body: { items: [{ content: 'default project fact' }] },
      });
      assert.equal(
        (await t.call('POST', bankPath('dflt', '/memories/recall'), { token: k, body: { query: 'fact' } }))
          .status,
        200,
      );
      const denied = await t.call('POST', bankPath('dflt', '/memories'), {
        token: k,
        body: { items: [{ content: 'x' }] },
      });
      assert.equal(denied.status, 403);
      assert.equal((await t.call('GET', '/v1/default/projects', { token: k })).status, 403);
    });

    test('revoked and expired keys are 401 at once', async () => {
      const r = await t.call('POST', '/v1/default/projects/p1/keys', {
        body: { name: 'tmp', scopes: ['recall'] },
      });
      assert.equal((await t.call('GET', '/v1/me/spaces', { token: r.body.key })).status, 403);
      const rev = await t.call('DELETE', `/v1/default/projects/p1/keys/${r.body.id}`);
      assert.equal(rev.status, 200);
      assert.equal((await t.call('GET', '/v1/me/spaces', { token: r.body.key })).status, 401);
      const past = await t.call('POST', '/v1/default/projects/p1/keys', {
        body: { name: 'past', scopes: ['recall'], expires_at: '2001-01-01T00:00:00Z' },
      });
      assert.equal(past.status, 400);
    });

    test('projects: create 201, duplicate 409, list, delete (not default)', async () => {
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'p1', name: 'again' } })).status,
        409,
      );
      const list = await t.call('GET', '/v1/default/projects');
      assert.ok(list.body.items.some((p: any) => p.id === 'default'));
      assert.equal((await t.call('DELETE', '/v1/default/projects/default')).status, 400);
      await t.call('POST', '/v1/default/projects', { body: { id: 'gone', name: 'G' } });
      assert.equal((await t.call('DELETE', '/v1/default/projects/gone')).status, 200);
      assert.equal((await t.call('DELETE', '/v1/default/projects/gone')).status, 404);
      // project routes are operator-only, even for an all-scopes key of the default project
      const k = (
        await t.call('POST', '/v1/default/projects/default/keys', {
          body: { name: 'a', scopes: [...SCOPES] },
        })
      ).body.key;
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { token: k, body: { id: 'x', name: 'x' } })).status,
        403,
      );
    });

    test('audit records mutations and denials, filters and pages', async () => {
      await t.call('POST', me('audited', '/memories'), {
        token: allKey,
        body: { items: [{ content: 'audit me' }] },
      });
      await t.call('POST', me('audited', '/memories'), {
        token: keys.recall,
        body: { items: [{ content: 'denied' }] },
      });
      await t.call('POST', me('audited', '/memories/recall'), { token: allKey, body: { query: 'audit' } });
      const a = await t.call('GET', '/v1/me/audit?bank=audited', { token: allKey });
      assert.equal(a.status, 200);
      const actions = a.body.items.map((e: any) => `${e.action}:${e.status}`);
      assert.deepEqual(actions, ['memories.retain:403', 'memories.retain:200']);
      const e = a.body.items[1];
      assert.equal(e.actor.type, 'key');
      assert.ok(e.actor.key_id);
      assert.ok(e.request_id);
      const page = await t.call('GET', '/v1/me/audit?limit=1', { token: allKey });
      assert.equal(page.body.items.length, 1);
      assert.ok(page.body.next_cursor);
      const next = await t.call('GET', `/v1/me/audit?limit=1&cursor=${page.body.next_cursor}`, {
        token: allKey,
      });
      assert.notEqual(next.body.items[0].id, page.body.items[0].id);
      const byAction = await t.call('GET', '/v1/me/audit?action=spaces.create', { token: allKey });
      assert.ok(byAction.body.items.every((x: any) => x.action === 'spaces.create'));
      // deleting the bank keeps its trail
      await t.call('DELETE', me('audited'), { token: allKey });
      const kept = await t.call('GET', '/v1/me/audit?bank=audited', { token: allKey });
      assert.equal(kept.body.items[0].action, 'banks.delete');
      assert.equal(kept.body.items.length, 3);
    });
  });
}
