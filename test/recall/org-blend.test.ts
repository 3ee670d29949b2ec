/**
 * Org blending: an org memory about the same subject as a person memory (a shared entity) and
 * close in meaning yields to it, whether they agree or conflict; an org memory on another
 * subject, or on the same subject but saying something else, stays. Deterministic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const contact = { text: 'contact', type: 'OTHER' };
const PERSON = 'Frank prefers to be contacted by email';
const AGREE = 'Customers prefer to be contacted by email';
const CONFLICT = 'Customers prefer to be contacted by phone';
const SAME_SUBJECT_OTHER_FACT = 'Contact details are stored for two years';
const UNRELATED = 'Bicycles come with a two year warranty';
const QUERY = 'How should Frank be contacted? Contact details and bicycle warranty';

for (const engine of ENGINES) {
  describe(`org blending (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      assert.equal(
        (await t.call('POST', '/v1/default/spaces', { body: { id: 'shop', name: 'Shop' } })).status,
        201,
      );
      const retain = async (bank: string, items: unknown[], query = '') => {
        const r = await t.call('POST', bankPath(bank, `/memories${query}`), { body: { items } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      };
      await retain(
        'frank',
        [
          { content: PERSON, entities: [{ text: 'Frank', type: 'PERSON' }, contact] },
          { content: 'Frank bought a red bicycle in May', entities: [{ text: 'Frank', type: 'PERSON' }] },
        ],
        '?space=shop',
      );
      await retain('gina', [{ content: 'Gina works the Saturday shift' }], '?space=shop');
      await retain('__org__:shop', [
        { content: AGREE, entities: [contact] },
        { content: CONFLICT, entities: [contact] },
        { content: SAME_SUBJECT_OTHER_FACT, entities: [contact] },
        { content: UNRELATED },
      ]);
    });
    after(() => t.close());

    const blended = async (bank: string) => {
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: QUERY, include_org: true, space: 'shop' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.usage.org_blended, true);
      return r.body.results as { id: string; bank_id: string; text: string }[];
    };

    test('agree: the person memory stands, the org restatement yields', async () => {
      const texts = (await blended('frank')).map((r) => r.text);
      assert.ok(texts.includes(PERSON));
      assert.ok(!texts.includes(AGREE), texts.join('\n'));
    });

    test('conflict: the person memory wins', async () => {
      const results = await blended('frank');
      const texts = results.map((r) => r.text);
      assert.ok(!texts.includes(CONFLICT), texts.join('\n'));
      assert.equal(results.find((r) => r.text === PERSON)?.bank_id, 'frank');
    });

    test('unrelated, or the same subject saying something else: the org memory stays', async () => {
      const results = await blended('frank');
      const org = results.filter((r) => r.bank_id === '__org__:shop').map((r) => r.text);
      assert.deepEqual(org.sort(), [SAME_SUBJECT_OTHER_FACT, UNRELATED].sort());
    });

    test('with no person memory on the subject, the org memories all stay', async () => {
      const org = (await blended('gina')).filter((r) => r.bank_id === '__org__:shop').map((r) => r.text);
      assert.deepEqual(org.sort(), [AGREE, CONFLICT, SAME_SUBJECT_OTHER_FACT, UNRELATED].sort());
    });

    test('deterministic: the same recall gives the same order', async () => {
      const a = await blended('frank');
      const b = await blended('frank');
      assert.deepEqual(
        a.map((r) => `${r.bank_id}|${r.id}`),
        b.map((r) => `${r.bank_id}|${r.id}`),
      );
    });

    test('without include_org, only the person bank', async () => {
      const r = await t.call('POST', bankPath('frank', '/memories/recall'), { body: { query: QUERY } });
      assert.equal(r.body.usage.org_blended, false);
      assert.ok((r.body.results as { bank_id: string }[]).every((x) => x.bank_id === 'frank'));
    });
  });
}
