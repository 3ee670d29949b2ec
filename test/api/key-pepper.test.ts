import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

for (const engine of ENGINES) {
  describe(`the key pepper is read once per store (${engine})`, () => {
    let t: TestApp;
    let reads = 0;
    let key = '';
    before(async () => {
      const store = await openTestStore(engine);
      const setting = store.setting.bind(store);
      store.setting = (name, init) => {
        if (name === 'key_pepper') reads++;
        return setting(name, init);
      };
      t = await testApp(engine, { store });
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'pp', name: 'P' } })).status,
        201,
      );
      const r = await t.call('POST', '/v1/default/projects/pp/keys', {
        body: { name: 'k', scopes: ['recall'] },
      });
      assert.equal(r.status, 201);
      key = r.body.key;
    });
    after(() => t.close());

    test('requests with a key hash it without reading the settings table again', async () => {
      const path = bankPath('b', '/memories', '/v1/me');
      for (let i = 0; i < 3; i++) {
        const r = await t.call('GET', path, { token: key });
        assert.notEqual(r.status, 401, JSON.stringify(r.body));
      }
      const wrong = `${key.slice(0, -4)}AAAA`;
      assert.equal((await t.call('GET', path, { token: wrong })).status, 401);
      assert.equal(reads, 1);
      // Revocation still counts at once: the key record is read on every request.
      const id = key.split('_')[1]!;
      assert.equal((await t.call('DELETE', `/v1/default/projects/pp/keys/${id}`)).status, 200);
      assert.equal((await t.call('GET', path, { token: key })).status, 401);
    });
  });
}
