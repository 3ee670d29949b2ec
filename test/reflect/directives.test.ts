import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { directiveApplies } from '../../src/core/directives.js';
import type { Directive } from '../../src/core/types.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const directive = (tags: string[], active = true): Directive => ({
  id: randomUUID(),
  bank_id: 'b',
  name: 'n',
  text: 't',
  priority: 0,
  tags,
  active,
  created_at: new Date(),
  updated_at: new Date(),
});

describe('which directives apply', () => {
  test('untagged directives always apply; inactive ones never', () => {
    assert.equal(directiveApplies(directive([]), undefined), true);
    assert.equal(directiveApplies(directive([]), ['sales'], 'exact'), true);
    assert.equal(directiveApplies(directive([], false), undefined), false);
  });

  test('tagged directives need the request to name matching tags', () => {
    const sales = directive(['sales', 'eu']);
    assert.equal(directiveApplies(sales, undefined), false);
    assert.equal(directiveApplies(sales, []), false);
    assert.equal(directiveApplies(sales, ['support']), false);
    assert.equal(directiveApplies(sales, ['sales', 'support'], 'any'), true);
    assert.equal(directiveApplies(sales, ['sales', 'support'], 'all'), false);
    assert.equal(directiveApplies(sales, ['sales'], 'all_strict'), true);
    assert.equal(directiveApplies(sales, ['eu', 'sales'], 'exact'), true);
    assert.equal(directiveApplies(sales, ['sales'], 'exact'), false);
  });
});

for (const engine of ENGINES) {
  describe(`directives API (${engine})`, () => {
    let t: TestApp;
    const bank = 'shop@example.com';
    const path = (rest = '') => bankPath(bank, `/directives${rest}`);
    before(async () => {
      t = await testApp(engine);
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'Bought running shoes' }] },
      });
    });
    after(() => t.close());

    test('create, list (highest priority first), get, update and delete', async () => {
      const low = await t.call('POST', path(), { body: { text: 'Answer in English.' } });
      assert.equal(low.status, 201, JSON.stringify(low.body));
      assert.equal(low.body.text, 'Answer in English.');
      assert.equal(low.body.content, 'Answer in English.');
      assert.equal(low.body.name, 'Answer in English.');
      assert.equal(low.body.priority, 0);
      assert.deepEqual(low.body.tags, []);
      assert.equal(low.body.active, true);
      assert.equal(low.body.bank_id, bank);
      assert.ok(low.body.created_at);
      // Hindsight's spelling of the fields is accepted too.
      const high = await t.call('POST', path(), {
        body: {
          name: 'returns',
          content: 'Never recommend a returned product.',
          priority: 10,
          tags: ['sales', 'sales'],
          is_active: true,
        },
      });
      assert.equal(high.status, 201);
      assert.equal(high.body.name, 'returns');
      assert.deepEqual(high.body.tags, ['sales']);

      const list = await t.call('GET', path());
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((d: { id: string }) => d.id),
        [high.body.id, low.body.id],
      );
      assert.equal((await t.call('GET', path(`/${low.body.id}`))).body.text, 'Answer in English.');

      const off = await t.call('PATCH', path(`/${low.body.id}`), {
        body: { active: false, priority: 20, name: null },
      });
      assert.equal(off.status, 200);
      assert.equal(off.body.active, false);
      assert.equal(off.body.priority, 20);
      assert.equal(off.body.name, 'Answer in English.', 'null leaves a field as it is');
      assert.equal(off.body.text, 'Answer in English.');
      assert.ok(new Date(off.body.updated_at) >= new Date(off.body.created_at));

      const gone = await t.call('DELETE', path(`/${low.body.id}`));
      assert.deepEqual(gone.body, { deleted: true, id: low.body.id });
      assert.equal((await t.call('DELETE', path(`/${low.body.id}`))).status, 404);
      assert.equal((await t.call('GET', path(`/${low.body.id}`))).status, 404);
      assert.equal((await t.call('GET', path())).body.items.length, 1);
    });

    test('bad input is a clear 400 and changes nothing', async () => {
      const before = (await t.call('GET', path())).body.items;
      for (const body of [
        {},
        { text: '' },
        { text: '   ' },
        { text: 'x', priority: 1.5 },
        { text: 'x', tags: [''] },
        { text: 'x'.repeat(4001) },
      ]) {
        const r = await t.call('POST', path(), { body });
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.body.error.code, 'validation_error');
      }
      const id = before[0].id;
      assert.equal((await t.call('PATCH', path(`/${id}`), { body: { text: ' ' } })).status, 400);
      assert.equal((await t.call('PATCH', path(`/${id}`), { body: { active: 'yes' } })).status, 400);
      assert.deepEqual((await t.call('GET', path())).body.items, before);
    });

    test('unknown banks and directives are 404', async () => {
      assert.equal((await t.call('GET', bankPath('nobody', '/directives'))).status, 404);
      assert.equal(
        (await t.call('POST', bankPath('nobody', '/directives'), { body: { text: 'x' } })).status,
        404,
      );
      assert.equal(
        (await t.call('PATCH', path(`/${randomUUID()}`), { body: { active: false } })).status,
        404,
      );
      assert.equal((await t.call('PATCH', path('/not-a-uuid'), { body: { active: false } })).status, 404);
    });

    test('directives need the admin scope', async () => {
      const recall = await t.call('POST', '/v1/default/projects/default/keys', {
        body: { name: 'r', scopes: ['recall'] },
      });
      const admin = await t.call('POST', '/v1/default/projects/default/keys', {
        body: { name: 'a', scopes: ['admin'] },
      });
      const denied = await t.call('GET', bankPath(bank, '/directives', '/v1/me'), { token: recall.body.key });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.required_scope, 'admin');
      const posted = await t.call('POST', bankPath(bank, '/directives', '/v1/me'), {
        token: admin.body.key,
        body: { text: 'Be brief.' },
      });
      assert.equal(posted.status, 201);
    });
  });
}
