import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`GET /banks (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      await t.call('POST', '/v1/default/spaces', { body: { id: 'acme', name: 'Acme' } });
      for (const [bank, query] of [
        ['carol@acme.com', '?space=acme'],
        ['bob', ''],
        ['team/a', ''],
        ['__org__:acme', ''],
        ['alice', '?space=acme'],
      ] as const) {
        const r = await t.call('POST', bankPath(bank, `/memories${query}`), {
          body: {
            items: [
              { content: `${bank} likes tea`, document_id: 'd1' },
              { content: `${bank} lives in Lyon` },
            ],
          },
        });
        assert.equal(r.status, 200);
      }
    });
    after(() => t.close());

    const ids = (body: any) => body.items.map((b: any) => b.id);

    test('lists bank profiles ordered by id', async () => {
      const r = await t.call('GET', '/v1/default/banks');
      assert.equal(r.status, 200);
      assert.deepEqual(ids(r.body), ['__org__:acme', 'alice', 'bob', 'carol@acme.com', 'team/a']);
      assert.equal(r.body.next_cursor, null);
      const carol = r.body.items.find((b: any) => b.id === 'carol@acme.com');
      assert.equal(carol.space_id, 'acme');
      assert.equal(carol.memory_count, 2);
      assert.equal(carol.document_count, 1);
      assert.deepEqual(carol.disposition, { skepticism: 3, literalism: 3, empathy: 3 });
      assert.equal(r.body.items[0].is_org_bank, true);
    });

    test('pages by cursor without gaps or repeats', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const r = await t.call('GET', `/v1/default/banks?limit=2${q}`);
        assert.equal(r.status, 200);
        assert.ok(r.body.items.length <= 2);
        seen.push(...ids(r.body));
        cursor = r.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(seen, ['__org__:acme', 'alice', 'bob', 'carol@acme.com', 'team/a']);
      // an exact fit ends with a null cursor
      const five = await t.call('GET', '/v1/default/banks?limit=5');
      assert.equal(five.body.items.length, 5);
      assert.equal(five.body.next_cursor, null);
    });

    test('?space= keeps that space; an unknown space is 404', async () => {
      const r = await t.call('GET', '/v1/default/banks?space=acme');
      assert.deepEqual(ids(r.body), ['__org__:acme', 'alice', 'carol@acme.com']);
      const page = await t.call('GET', '/v1/default/banks?space=acme&limit=1');
      assert.deepEqual(ids(page.body), ['__org__:acme']);
      const next = await t.call(
        'GET',
        `/v1/default/banks?space=acme&limit=5&cursor=${page.body.next_cursor}`,
      );
      assert.deepEqual(ids(next.body), ['alice', 'carol@acme.com']);
      const missing = await t.call('GET', '/v1/default/banks?space=nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, 'not_found');
    });

    test("Hindsight's shape: banks, total, limit, offset; ?q= and offset paging", async () => {
      const r = await t.call('GET', '/v1/default/banks?limit=2&offset=1');
      assert.deepEqual(ids(r.body), ['alice', 'bob']);
      assert.deepEqual(
        r.body.banks.map((b: any) => [b.bank_id, b.fact_count]),
        [
          ['alice', 2],
          ['bob', 2],
        ],
      );
      assert.equal(r.body.total, 5);
      assert.equal(r.body.limit, 2);
      assert.equal(r.body.offset, 1);
      const last = await t.call('GET', '/v1/default/banks?limit=2&offset=4');
      assert.deepEqual(ids(last.body), ['team/a']);
      assert.equal(last.body.next_cursor, null);
      // Any case; LIKE's wildcards in q match only themselves.
      const acme = await t.call('GET', '/v1/default/banks?q=ACME');
      assert.deepEqual(ids(acme.body), ['__org__:acme', 'carol@acme.com']);
      assert.equal(acme.body.total, 2);
      for (const q of ['%', '_', 'a_c'])
        assert.deepEqual(ids((await t.call('GET', `/v1/default/banks?q=${encodeURIComponent(q)}`)).body), [
          ...(q === '_' ? ['__org__:acme'] : []),
        ]);
      const inSpace = await t.call('GET', '/v1/default/banks?space=acme&q=a&limit=1');
      assert.deepEqual(ids(inSpace.body), ['__org__:acme']);
      assert.equal(inSpace.body.total, 3);
    });

    test('bad paging parameters are a 400', async () => {
      for (const q of ['limit=0', 'limit=501', 'limit=abc', `cursor=${'x'.repeat(300)}`, 'offset=-1']) {
        const r = await t.call('GET', `/v1/default/banks?${q}`);
        assert.equal(r.status, 400, q);
        assert.equal(r.body.error.code, 'validation_error');
      }
    });

    test('needs the recall scope; a project sees only its own banks', async () => {
      const created = await t.call('POST', '/v1/default/projects', { body: { id: 'other', name: 'Other' } });
      assert.equal(created.status, 201);
      const mint = async (scopes: string[]) =>
        (
          await t.call('POST', '/v1/default/projects/other/keys', {
            body: { name: scopes.join('+'), scopes },
          })
        ).body.key;
      const retainKey = await mint(['retain']);
      const recallKey = await mint(['recall', 'retain']);
      const denied = await t.call('GET', '/v1/me/banks', { token: retainKey });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.required_scope, 'recall');
      const empty = await t.call('GET', '/v1/me/banks', { token: recallKey });
      assert.deepEqual(empty.body, {
        items: [],
        next_cursor: null,
        banks: [],
        total: 0,
        limit: 50,
        offset: 0,
      });
      await t.call('POST', bankPath('zed', '/memories', '/v1/me'), {
        token: recallKey,
        body: { items: [{ content: 'zed is here' }] },
      });
      const mine = await t.call('GET', '/v1/me/banks', { token: recallKey });
      assert.deepEqual(ids(mine.body), ['zed']);
      const defaults = await t.call('GET', '/v1/default/banks');
      assert.ok(!ids(defaults.body).includes('zed'));
      assert.equal((await t.call('GET', '/v1/me/banks', { token: null })).status, 401);
    });
  });
}
