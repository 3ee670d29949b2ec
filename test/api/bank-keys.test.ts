import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GUARDED_MOUNTS } from '../../src/api/routes/index.js';
import { type Action, bankFiltered } from '../../src/contract/actions.js';
import { SCOPES } from '../../src/core/types.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');
const ZERO = '00000000-0000-0000-0000-000000000000';

/**
 * Every guarded `/v1/me` route, read from the mounted routers (the guard carries its action), so
 * a route added later is checked without touching this file.
 */
function meRoutes(): { method: string; path: string; action: Action }[] {
  const out = new Map<string, { method: string; path: string; action: Action }>();
  for (const [base, router] of GUARDED_MOUNTS) {
    if (base !== '/v1/me') continue;
    for (const r of router.routes) {
      const action = (r.handler as { action?: Action }).action;
      if (action) out.set(`${r.method} ${r.path}`, { method: r.method, path: r.path, action });
    }
  }
  return [...out.values()];
}

/** A concrete path for a route pattern: the bank given, a zero uuid or a plain word for the rest. */
function fill(path: string, bank: string): string {
  return `/v1/me${path.replace(/:(\w+)(\{[^}]*\})?/g, (_, name: string) =>
    name === 'bank' ? encodeURIComponent(bank) : name === 'id' ? ZERO : 'x',
  )}`;
}

for (const engine of ENGINES) {
  describe(`keys scoped to banks (${engine})`, () => {
    let t: TestApp;
    let full = '';
    let scoped = '';
    const mint = async (banks: unknown, scopes: readonly string[] = SCOPES) =>
      t.call('POST', '/v1/default/projects/bk/keys', { body: { name: 'k', scopes, banks } });

    before(async () => {
      t = await testApp(engine);
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'bk', name: 'B' } })).status,
        201,
      );
      const f = await mint(undefined);
      assert.equal(f.status, 201);
      assert.equal(f.body.banks, null);
      full = f.body.key;
      const s = await mint(['user-42/*', 'alice']);
      assert.equal(s.status, 201);
      assert.deepEqual(s.body.banks, ['user-42/*', 'alice']);
      scoped = s.body.key;
      for (const bank of ['alice', 'alice2', 'bob', 'user-42', 'user-42/a', 'user-4/x', 'user-420']) {
        const r = await t.call('POST', me(bank, '/memories'), {
          token: full,
          body: { items: [{ content: `a memory of ${bank}` }] },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
    });
    after(() => t.close());

    test('the route table has bank routes and project-wide routes to check', () => {
      const routes = meRoutes();
      assert.ok(routes.filter((r) => r.path.includes(':bank')).length >= 20, `${routes.length} routes`);
      assert.ok(routes.some((r) => !r.path.includes(':bank')));
    });

    test('every bank route answers 404 for a bank outside the key, before reading its body', async () => {
      for (const r of meRoutes().filter((x) => x.path.includes(':bank'))) {
        const res = await t.call(r.method, fill(r.path, 'bob'), {
          token: scoped,
          ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: {} }),
        });
        const what = `${r.method} ${r.path}`;
        assert.equal(res.status, 404, `${what}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error.message, "bank 'bob' not found", what);
      }
    });

    test('the same routes are not refused on a bank within the key', async () => {
      for (const r of meRoutes().filter((x) => x.path.includes(':bank') && x.method === 'GET')) {
        const res = await t.call(r.method, fill(r.path, 'user-42/a'), { token: scoped });
        assert.notEqual(res.status, 403, `${r.method} ${r.path}`);
        assert.notEqual(res.body?.error?.message, "bank 'user-42/a' not found", `${r.method} ${r.path}`);
      }
      const recall = await t.call('POST', me('user-42/a', '/memories/recall'), {
        token: scoped,
        body: { query: 'memory' },
      });
      assert.equal(recall.status, 200);
      assert.ok(recall.body.results.length > 0);
    });

    test('every route addressed to no bank refuses the key unless it filters by its banks', async () => {
      for (const r of meRoutes().filter((x) => !x.path.includes(':bank'))) {
        if (bankFiltered(r.action)) continue;
        const res = await t.call(r.method, fill(r.path, ''), {
          token: scoped,
          ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: {} }),
        });
        assert.equal(res.status, 403, `${r.method} ${r.path}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.error.message, /limited to some banks/);
      }
    });

    test('the bank list shows only the key’s banks, with the right total', async () => {
      const r = await t.call('GET', '/v1/me/banks', { token: scoped });
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.items.map((b: { id: string }) => b.id),
        ['alice', 'user-42/a'],
      );
      assert.equal(r.body.total, 2);
      const paged = await t.call('GET', '/v1/me/banks?limit=1', { token: scoped });
      assert.deepEqual(
        paged.body.items.map((b: { id: string }) => b.id),
        ['alice'],
      );
      const next = await t.call('GET', `/v1/me/banks?limit=1&cursor=${paged.body.next_cursor}`, {
        token: scoped,
      });
      assert.deepEqual(
        next.body.items.map((b: { id: string }) => b.id),
        ['user-42/a'],
      );
      const all = await t.call('GET', '/v1/me/banks', { token: full });
      assert.equal(all.body.total, 7, 'a key without banks sees every bank');
    });

    test('an exact id is exact and a prefix stops at its boundary', async () => {
      assert.equal((await t.call('GET', me('alice'), { token: scoped })).status, 200);
      assert.equal((await t.call('GET', me('alice2'), { token: scoped })).status, 404);
      assert.equal((await t.call('GET', me('user-42'), { token: scoped })).status, 404);
      assert.equal((await t.call('GET', me('user-420'), { token: scoped })).status, 404);
      const four = (await mint(['user-4/*'])).body.key;
      assert.equal((await t.call('GET', me('user-4/x'), { token: four })).status, 200);
      assert.equal((await t.call('GET', me('user-42/a'), { token: four })).status, 404);
      // A pattern is literal text: LIKE wildcards in it match only themselves.
      const like = (await mint(['user-4_/*', 'al%'])).body.key;
      const listed = await t.call('GET', '/v1/me/banks', { token: like });
      assert.deepEqual(listed.body.items, []);
      assert.equal((await t.call('GET', me('user-42/a'), { token: like })).status, 404);
    });

    test('a write to a bank outside the key creates nothing', async () => {
      const r = await t.call('POST', me('mallory', '/memories'), {
        token: scoped,
        body: { items: [{ content: 'sneaky' }] },
      });
      assert.equal(r.status, 404);
      assert.equal((await t.call('GET', me('mallory'), { token: full })).status, 404);
      const inside = await t.call('POST', me('user-42/new', '/memories'), {
        token: scoped,
        body: { items: [{ content: 'allowed' }] },
      });
      assert.equal(inside.status, 200, 'a new bank within a prefix is created on first write');
    });

    test('the org bank of a space blends only when the key lists it', async () => {
      assert.equal(
        (await t.call('POST', '/v1/me/spaces', { token: full, body: { id: 'acme', name: 'Acme' } })).status,
        201,
      );
      assert.equal(
        (await t.call('PUT', '/v1/me/spaces/acme/banks/user-42%2Fa', { token: full })).status,
        200,
      );
      const org = await t.call('POST', me('__org__:acme', '/memories'), {
        token: full,
        body: { items: [{ content: 'the company memory' }] },
      });
      assert.equal(org.status, 200);
      const body = { query: 'memory', include_org: true, space: 'acme' };
      const refused = await t.call('POST', me('user-42/a', '/memories/recall'), { token: scoped, body });
      assert.equal(refused.status, 404);
      assert.equal(refused.body.error.message, "bank '__org__:acme' not found");
      const withOrg = (await mint(['user-42/*', '__org__:acme'])).body.key;
      const blended = await t.call('POST', me('user-42/a', '/memories/recall'), { token: withOrg, body });
      assert.equal(blended.status, 200);
      assert.equal(blended.body.usage.org_blended, true);
    });

    test('the default surface applies the same check to a default-project key', async () => {
      const k = await t.call('POST', '/v1/default/projects/default/keys', {
        body: { name: 'd', scopes: ['recall'], banks: ['alice'] },
      });
      assert.equal(k.status, 201);
      const opts = { token: k.body.key };
      const zed = await t.call('POST', '/v1/default/banks/zed/memories', {
        body: { items: [{ content: 'z' }] },
      });
      assert.equal(zed.status, 200);
      assert.equal((await t.call('GET', '/v1/default/banks/zed')).status, 200);
      assert.equal((await t.call('GET', '/v1/default/banks/zed', opts)).status, 404);
      assert.equal((await t.call('GET', '/v1/default/banks', opts)).body.total, 0);
    });

    test('bank patterns are validated and put in NFC', async () => {
      for (const banks of [
        [],
        Array.from({ length: 101 }, (_, i) => `b${i}`),
        ['a*b'],
        ['*'],
        ['**'],
        [''],
        [' x'],
        ['x\u0001'],
      ]) {
        const r = await mint(banks);
        assert.equal(r.status, 400, `${JSON.stringify(banks)}: ${JSON.stringify(r.body)}`);
      }
      const r = await mint(['Cafe\u0301/*', 'Cafe\u0301/*', 'Café/*']);
      assert.equal(r.status, 201);
      assert.deepEqual(r.body.banks, ['Café/*']);
      const listed = await t.call('GET', '/v1/default/projects/bk/keys');
      assert.ok(listed.body.items.some((k: { banks: string[] | null }) => k.banks?.[0] === 'Café/*'));
    });
  });
}
