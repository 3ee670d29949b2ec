/**
 * Recall's `entities` section when no result names an entity: empty, and answered without a
 * statement to find the results' entity links (a round trip per Recall). Results that name
 * entities still read them. Both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`Recall's entities section without entities (${engine})`, () => {
    let t: TestApp;
    let linkReads = 0;
    before(async () => {
      const base = await openTestStore(engine);
      t = await testApp(engine, {
        store: {
          ...base,
          entitiesOfMemories: (...args: Parameters<typeof base.entitiesOfMemories>) => {
            linkReads++;
            return base.entitiesOfMemories(...args);
          },
        },
      });
      const retain = async (bank: string, items: object[]) =>
        assert.equal((await t.call('POST', bankPath(bank, '/memories'), { body: { items } })).status, 200);
      await retain('plain', [{ content: 'the kettle whistles at dawn' }, { content: 'tea tastes of smoke' }]);
      await retain('named', [
        { content: 'Dana brews tea at dawn', entities: [{ text: 'Dana', type: 'PERSON' }] },
      ]);
    });
    after(() => t.close());

    test('results naming no entity: an empty section, no link read', async () => {
      const before = linkReads;
      const r = await t.call('POST', bankPath('plain', '/memories/recall'), {
        body: { query: 'tea at dawn' },
      });
      assert.equal(r.status, 200);
      assert.ok(r.body.results.length > 0);
      assert.deepEqual(
        r.body.results.flatMap((x: { entities: string[] }) => x.entities),
        [],
      );
      assert.deepEqual(r.body.entities, {});
      assert.equal(linkReads, before);
    });

    test('results naming entities: their section, read', async () => {
      const before = linkReads;
      const r = await t.call('POST', bankPath('named', '/memories/recall'), {
        body: { query: 'tea at dawn' },
      });
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body.entities), ['Dana']);
      assert.equal(linkReads, before + 1);
    });
  });
}
