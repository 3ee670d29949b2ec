import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inScope } from '../../src/core/bank-scope.js';
import { SCOPES } from '../../src/core/types.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

/**
 * The attack: a key limited to some banks, with `admin`, reads the project's audit trail and
 * spaces hoping to learn of other banks. It sees only entries and spaces of its own banks.
 */
const PATTERNS = ['user-42/*', 'alice'];
const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

interface Entry {
  bank_id: string | null;
  action: string;
}

for (const engine of ENGINES) {
  describe(`listings for a key limited to some banks (${engine})`, () => {
    let t: TestApp;
    let full = '';
    let scoped = '';

    before(async () => {
      t = await testApp(engine);
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'sl', name: 'S' } })).status,
        201,
      );
      const mint = async (banks?: string[]) => {
        const r = await t.call('POST', '/v1/default/projects/sl/keys', {
          body: { name: 'k', scopes: SCOPES, banks },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return r.body.key as string;
      };
      full = await mint();
      scoped = await mint(PATTERNS);
      for (const bank of ['alice', 'alice2', 'bob', 'user-42/a', 'user-42/b', 'user-420']) {
        const r = await t.call('POST', me(bank, '/memories'), {
          token: full,
          body: { items: [{ content: `a memory of ${bank}` }] },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      for (const [space, banks] of [
        ['acme', ['user-42/a', 'bob', 'user-420']],
        ['globex', ['alice2']],
        ['void', []],
      ] as const) {
        const c = await t.call('POST', '/v1/me/spaces', { token: full, body: { id: space, name: space } });
        assert.equal(c.status, 201);
        for (const bank of banks) {
          const a = await t.call('PUT', `/v1/me/spaces/${space}/banks/${encodeURIComponent(bank)}`, {
            token: full,
          });
          assert.equal(a.status, 200, JSON.stringify(a.body));
        }
      }
      // The scoped key's own write, and a refused one of another bank (audited as a refusal).
      assert.equal(
        (
          await t.call('POST', me('alice', '/memories'), {
            token: scoped,
            body: { items: [{ content: 'x' }] },
          })
        ).status,
        200,
      );
      assert.equal((await t.call('DELETE', me('bob'), { token: scoped })).status, 404);
    });
    after(() => t.close());

    /** Every entry the key can page through. */
    async function auditOf(token: string, query = ''): Promise<Entry[]> {
      const out: Entry[] = [];
      let cursor: string | null = null;
      do {
        const sep = query ? '&' : '';
        const path: string = `/v1/me/audit?limit=3${sep}${query}${cursor ? `&cursor=${cursor}` : ''}`;
        const r = await t.call('GET', path, { token });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        out.push(...r.body.items);
        cursor = r.body.next_cursor;
      } while (cursor);
      return out;
    }

    test('the audit trail shows the key only entries of its banks, over every page', async () => {
      const all = await auditOf(full);
      const banksSeen = new Set(all.map((e) => e.bank_id));
      for (const b of ['bob', 'alice2', 'user-420', null]) assert.ok(banksSeen.has(b), `full key sees ${b}`);

      const mine = await auditOf(scoped);
      assert.ok(mine.length > 0);
      for (const e of mine) {
        assert.ok(e.bank_id !== null && inScope(PATTERNS, e.bank_id), JSON.stringify(e));
      }
      const expected = all.filter((e) => e.bank_id !== null && inScope(PATTERNS, e.bank_id));
      assert.deepEqual(mine, expected, 'exactly the entries of its banks, in the same order');
      assert.deepEqual([...new Set(mine.map((e) => e.bank_id))].sort(), ['alice', 'user-42/a', 'user-42/b']);
      // Its own refusal on bob names bob: not its bank, so not shown.
      assert.ok(all.some((e) => e.bank_id === 'bob' && e.action === 'banks.delete'));
    });

    test('asking the audit trail for another bank or a project-wide action gives nothing', async () => {
      assert.deepEqual(await auditOf(scoped, 'bank=bob'), []);
      assert.deepEqual(await auditOf(scoped, 'bank=user-420'), []);
      assert.deepEqual(await auditOf(scoped, 'action=spaces.create'), []);
      assert.ok((await auditOf(full, 'action=spaces.create')).length === 3);
      const alice = await auditOf(scoped, 'bank=alice');
      assert.ok(alice.length >= 2 && alice.every((e) => e.bank_id === 'alice'));
    });

    test('the space list shows only spaces holding its banks, counting only them', async () => {
      const listed = await t.call('GET', '/v1/me/spaces', { token: scoped });
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.items.map((s: { id: string; bank_count: number }) => [s.id, s.bank_count]),
        [['acme', 1]],
      );
      const every = await t.call('GET', '/v1/me/spaces', { token: full });
      assert.deepEqual(
        every.body.items.map((s: { id: string; bank_count: number }) => [s.id, s.bank_count]),
        [
          ['acme', 3],
          ['globex', 1],
          ['void', 0],
        ],
      );
    });

    test("a space's banks: only the key's, and a space without them is not found", async () => {
      const acme = await t.call('GET', '/v1/me/spaces/acme/banks', { token: scoped });
      assert.equal(acme.status, 200);
      assert.deepEqual(
        acme.body.items.map((b: { id: string }) => b.id),
        ['user-42/a'],
      );
      for (const space of ['globex', 'void', 'nowhere']) {
        const r = await t.call('GET', `/v1/me/spaces/${space}/banks`, { token: scoped });
        assert.equal(r.status, 404, space);
        assert.equal(r.body.error.message, `space '${space}' not found`, 'the same answer whether it exists');
      }
      assert.equal((await t.call('GET', '/v1/me/spaces/void/banks', { token: full })).status, 200);
    });

    test('changing spaces stays refused: a space is project-wide', async () => {
      const create = await t.call('POST', '/v1/me/spaces', {
        token: scoped,
        body: { id: 'mine', name: 'm' },
      });
      assert.equal(create.status, 403);
      assert.equal((await t.call('DELETE', '/v1/me/spaces/acme', { token: scoped })).status, 403);
      const every = await t.call('GET', '/v1/me/spaces', { token: full });
      assert.equal(every.body.items.length, 3);
    });
  });
}
