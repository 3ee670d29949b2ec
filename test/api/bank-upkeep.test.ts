/**
 * Hindsight's bank upkeep calls: reset the config, set the disposition or background (older
 * calls), clear the memories, regenerate an entity.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`bank upkeep (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine, { masterKey: randomBytes(32).toString('base64') });
    });
    after(() => t.close());

    const retain = (bank: string, items: unknown[]) =>
      t.call('POST', bankPath(bank, '/memories'), { body: { items } });

    test('DELETE config resets every override but encryption', async () => {
      await t.call('PUT', bankPath('cfg'), { body: {} });
      const set = await t.call('PATCH', bankPath('cfg', '/config'), {
        body: { updates: { enable_reranking: false, disposition_empathy: 5, encryption: 'managed' } },
      });
      assert.equal(set.status, 200);
      const r = await t.call('DELETE', bankPath('cfg', '/config'));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.overrides, { encryption: 'managed' });
      assert.equal(r.body.config.enable_reranking, true);
      assert.equal(r.body.config.disposition_empathy, 3);
      assert.equal(r.body.config.encryption, 'managed');
      assert.deepEqual((await t.call('GET', bankPath('cfg', '/config'))).body.overrides, {
        encryption: 'managed',
      });
      assert.equal((await t.call('DELETE', bankPath('none', '/config'))).status, 404);
    });

    test('PUT profile sets the disposition; POST background sets the mission', async () => {
      await t.call('PUT', bankPath('who'), { body: { name: 'Who' } });
      const r = await t.call('PUT', bankPath('who', '/profile'), {
        body: { disposition: { skepticism: 5, literalism: 1, empathy: 4 } },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.bank_id, 'who');
      assert.deepEqual(r.body.disposition, { skepticism: 5, literalism: 1, empathy: 4 });
      const cfg = (await t.call('GET', bankPath('who', '/config'))).body.config;
      assert.equal(cfg.disposition_skepticism, 5);
      const bad = await t.call('PUT', bankPath('who', '/profile'), {
        body: { disposition: { skepticism: 9, literalism: 1, empathy: 4 } },
      });
      assert.equal(bad.status, 400);
      const bg = await t.call('POST', bankPath('who', '/background'), {
        body: { content: 'I help Alice plan trips', update_disposition: true },
      });
      assert.equal(bg.status, 200);
      assert.deepEqual(bg.body, {
        mission: 'I help Alice plan trips',
        background: 'I help Alice plan trips',
        disposition: { skepticism: 5, literalism: 1, empathy: 4 },
      });
      assert.equal((await t.call('GET', bankPath('who'))).body.mission, 'I help Alice plan trips');
    });

    test('DELETE memories clears the bank (or one fact type) and the documents left empty', async () => {
      await retain('clr', [
        { content: 'Alice likes tea', fact_type: 'preference', document_id: 'd1' },
        { content: 'Alice lives in Lyon', fact_type: 'world', document_id: 'd2' },
        { content: 'Alice met Bob', fact_type: 'experience', document_id: 'd2' },
      ]);
      await t.call('PATCH', bankPath('clr', '/config'), { body: { updates: { disposition_empathy: 2 } } });
      const one = await t.call('DELETE', bankPath('clr', '/memories?type=preference'));
      assert.equal(one.status, 200);
      assert.equal(one.body.success, true);
      assert.equal(one.body.deleted_count, 1);
      let profile = (await t.call('GET', bankPath('clr'))).body;
      assert.equal(profile.memory_count, 2);
      const docs = (await t.call('GET', bankPath('clr', '/documents'))).body.items.map((d: any) => d.id);
      assert.deepEqual(docs, ['d2'], 'd1 lost its only memory');
      const recall = await t.call('POST', bankPath('clr', '/memories/recall'), { body: { query: 'tea' } });
      assert.ok(!recall.body.results.some((m: any) => m.text === 'Alice likes tea'));
      const all = await t.call('DELETE', bankPath('clr', '/memories'));
      assert.equal(all.body.deleted_count, 2);
      profile = (await t.call('GET', bankPath('clr'))).body;
      assert.equal(profile.memory_count, 0);
      assert.equal(profile.document_count, 0);
      assert.equal(profile.disposition.empathy, 2, 'the bank and its config stay');
      assert.equal((await t.call('GET', bankPath('clr', '/documents'))).body.total, 0);
      assert.equal((await t.call('DELETE', bankPath('clr', '/memories?type=nonsense'))).status, 400);
      assert.equal((await t.call('DELETE', bankPath('nobank', '/memories'))).status, 404);
    });

    test('regenerate answers the entity as read now', async () => {
      await retain('ent', [{ content: 'Alice paints', entities: [{ text: 'Alice', type: 'PERSON' }] }]);
      const id = (await t.call('GET', bankPath('ent', '/entities'))).body.items[0].id;
      const r = await t.call('POST', bankPath('ent', `/entities/${id}/regenerate`));
      assert.equal(r.status, 200);
      assert.equal(r.body.canonical_name, 'Alice');
      assert.deepEqual(
        r.body.observations.map((o: any) => o.text),
        ['Alice paints'],
      );
    });

    test('scopes on /v1/me: config and identity need admin; clearing memories needs admin', async () => {
      const key = async (scopes: string[]) =>
        (await t.call('POST', '/v1/default/projects/default/keys', { body: { name: scopes.join(), scopes } }))
          .body.key;
      const retainKey = await key(['retain', 'recall']);
      for (const [method, path, body] of [
        ['DELETE', '/config', undefined],
        ['PUT', '/profile', { disposition: { skepticism: 1, literalism: 1, empathy: 1 } }],
        ['POST', '/background', { content: 'x' }],
        ['DELETE', '/memories', undefined],
      ] as const) {
        const r = await t.call(method, bankPath('who', path, '/v1/me'), { token: retainKey, body });
        assert.equal(r.status, 403, `${method} ${path}`);
        assert.equal(r.body.error.required_scope, 'admin');
      }
    });
  });
}
