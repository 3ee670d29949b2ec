import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

for (const engine of ENGINES) {
  describe(`spaces and org memory (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const retain = (bank: string, items: unknown[], query = '') =>
      t.call('POST', bankPath(bank, `/memories${query}`), { body: { items } });

    test('create, list, conflict, attach, list banks, remove, delete', async () => {
      const c = await t.call('POST', '/v1/default/spaces', { body: { id: 'acme', name: 'Acme Inc' } });
      assert.equal(c.status, 201);
      assert.equal(c.body.id, 'acme');
      assert.equal(c.body.name, 'Acme Inc');
      assert.equal(
        (await t.call('POST', '/v1/default/spaces', { body: { id: 'acme', name: 'x' } })).status,
        409,
      );
      await retain('carol@acme.com', [{ content: 'Carol works on billing' }]);
      const a = await t.call('PUT', `/v1/default/spaces/acme/banks/${encodeURIComponent('carol@acme.com')}`);
      assert.deepEqual(a.body, { space_id: 'acme', bank_id: 'carol@acme.com', attached: true });
      const banks = await t.call('GET', '/v1/default/spaces/acme/banks');
      assert.deepEqual(
        banks.body.items.map((b: any) => b.id),
        ['carol@acme.com'],
      );
      assert.equal(banks.body.items[0].space_id, 'acme');
      const list = await t.call('GET', '/v1/default/spaces');
      assert.equal(list.body.items.find((s: any) => s.id === 'acme').bank_count, 1);
      // a bank is in one space at most
      await t.call('POST', '/v1/default/spaces', { body: { id: 'other', name: 'Other' } });
      assert.equal(
        (await t.call('PUT', `/v1/default/spaces/other/banks/${encodeURIComponent('carol@acme.com')}`))
          .status,
        409,
      );
      // removing keeps the memories
      const r = await t.call(
        'DELETE',
        `/v1/default/spaces/acme/banks/${encodeURIComponent('carol@acme.com')}`,
      );
      assert.deepEqual(r.body, { space_id: 'acme', bank_id: 'carol@acme.com', attached: false });
      const profile = await t.call('GET', bankPath('carol@acme.com'));
      assert.equal(profile.body.space_id, null);
      assert.equal(profile.body.memory_count, 1);
      assert.equal((await t.call('GET', '/v1/default/spaces/nope/banks')).status, 404);
    });

    test('deleting a space unassigns its banks and deletes none', async () => {
      await t.call('POST', '/v1/default/spaces', { body: { id: 'temp', name: 'Temp' } });
      await retain('t1', [{ content: 'one' }], '?space=temp');
      await retain('t2', [{ content: 'two' }], '?space=temp');
      await retain('__org__:temp', [{ content: 'org fact' }]);
      const d = await t.call('DELETE', '/v1/default/spaces/temp');
      assert.deepEqual(d.body, { deleted: true, id: 'temp', banks_unassigned: 3 });
      for (const b of ['t1', 't2', '__org__:temp']) {
        const p = await t.call('GET', bankPath(b));
        assert.equal(p.status, 200);
        assert.equal(p.body.space_id, null);
        assert.equal(p.body.memory_count, 1);
      }
      assert.equal((await t.call('DELETE', '/v1/default/spaces/temp')).status, 404);
    });

    test('?space= attaches a new bank; the org bank needs its space', async () => {
      await t.call('POST', '/v1/default/spaces', { body: { id: 'beta', name: 'Beta' } });
      await retain('dave', [{ content: 'Dave likes chess' }], '?space=beta');
      assert.equal((await t.call('GET', bankPath('dave'))).body.space_id, 'beta');
      assert.equal((await retain('erin', [{ content: 'x' }], '?space=missing')).status, 404);
      const org = await retain('__org__:beta', [{ content: 'Beta offices close at 6pm' }]);
      assert.equal(org.status, 200);
      const p = await t.call('GET', bankPath('__org__:beta'));
      assert.equal(p.body.is_org_bank, true);
      assert.equal(p.body.space_id, 'beta');
      assert.equal((await retain('__org__:nospace', [{ content: 'x' }])).status, 404);
    });

    test('include_org blends the org bank; person wins conflicts; unrelated org memories stay', async () => {
      await t.call('POST', '/v1/default/spaces', { body: { id: 'shop', name: 'Shop' } });
      await retain(
        'frank',
        [
          {
            content: 'Frank prefers to be contacted by email',
            entities: [
              { text: 'Frank', type: 'PERSON' },
              { text: 'contact', type: 'OTHER' },
            ],
          },
          { content: 'Frank bought a red bicycle in May' },
        ],
        '?space=shop',
      );
      await retain('__org__:shop', [
        {
          content: 'Customers prefer to be contacted by phone',
          entities: [{ text: 'contact', type: 'OTHER' }],
        },
        { content: 'The shop is closed on public holidays' },
        { content: 'Bicycles come with a two year warranty' },
      ]);
      const plain = await t.call('POST', bankPath('frank', '/memories/recall'), {
        body: { query: 'bicycle warranty contacted' },
      });
      assert.ok(plain.body.results.every((r: any) => r.bank_id === 'frank'));
      assert.equal(plain.body.usage.org_blended, false);
      const r = await t.call('POST', bankPath('frank', '/memories/recall'), {
        body: {
          query: 'how should Frank be contacted, and bicycle warranty',
          include_org: true,
          space: 'shop',
        },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.usage.org_blended, true);
      const texts = r.body.results.map((x: any) => `${x.bank_id}|${x.text}`);
      assert.ok(texts.includes('frank|Frank prefers to be contacted by email'));
      assert.ok(texts.includes('__org__:shop|Bicycles come with a two year warranty'), texts.join('\n'));
      assert.ok(
        !texts.includes('__org__:shop|Customers prefer to be contacted by phone'),
        'conflicting org memory must yield',
      );
      // same recall twice: same order (deterministic)
      const again = await t.call('POST', bankPath('frank', '/memories/recall'), {
        body: {
          query: 'how should Frank be contacted, and bicycle warranty',
          include_org: true,
          space: 'shop',
        },
      });
      assert.deepEqual(
        again.body.results.map((x: any) => x.id),
        r.body.results.map((x: any) => x.id),
      );
    });

    test('include_org needs a space the bank is in', async () => {
      await retain('gina', [{ content: 'Gina' }]);
      const noSpace = await t.call('POST', bankPath('gina', '/memories/recall'), {
        body: { query: 'x', include_org: true },
      });
      assert.equal(noSpace.status, 400);
      const wrong = await t.call('POST', bankPath('gina', '/memories/recall'), {
        body: { query: 'x', include_org: true, space: 'shop' },
      });
      assert.equal(wrong.status, 400);
    });

    test('bank config: effective values, overrides, validation naming each key, reset', async () => {
      await retain('conf', [{ content: 'config bank' }]);
      const g = await t.call('GET', bankPath('conf', '/config'));
      assert.equal(g.body.bank_id, 'conf');
      assert.equal(g.body.config.disposition_empathy, 3);
      assert.deepEqual(g.body.overrides, {});
      const p = await t.call('PATCH', bankPath('conf', '/config'), {
        body: {
          updates: {
            disposition_empathy: 5,
            enable_graph_retrieval: false,
            retain_extraction_mode: 'verbose',
          },
        },
      });
      assert.equal(p.status, 200);
      assert.equal(p.body.config.disposition_empathy, 5);
      assert.deepEqual(p.body.overrides, {
        disposition_empathy: 5,
        enable_graph_retrieval: false,
        retain_extraction_mode: 'verbose',
      });
      assert.equal((await t.call('GET', bankPath('conf'))).body.disposition.empathy, 5);
      const bad = await t.call('PATCH', bankPath('conf', '/config'), {
        body: {
          updates: { disposition_skepticism: 0, disposition_literalism: 6, nonsense: 1, encryption: 'rot13' },
        },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'validation_error');
      assert.deepEqual(bad.body.error.details.map((d: any) => d.path).sort(), [
        'updates.disposition_literalism',
        'updates.disposition_skepticism',
        'updates.encryption',
        'updates.nonsense',
      ]);
      // nothing of a rejected patch is applied
      assert.equal((await t.call('GET', bankPath('conf', '/config'))).body.config.disposition_skepticism, 3);
      const noKey = await t.call('PATCH', bankPath('conf', '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(noKey.status, 400);
      assert.equal(noKey.body.error.code, 'master_key_missing');
      const reset = await t.call('PATCH', bankPath('conf', '/config'), {
        body: { updates: { disposition_empathy: null } },
      });
      assert.equal(reset.body.config.disposition_empathy, 3);
      assert.ok(!('disposition_empathy' in reset.body.overrides));
    });

    test('entities listing and delete bank', async () => {
      await retain('ents', [
        {
          content: 'Hank met Ivy in Paris',
          entities: [
            { text: 'Hank', type: 'PERSON' },
            { text: 'Ivy', type: 'PERSON' },
          ],
        },
        { content: 'Hank moved to Rome', entities: [{ text: 'Hank', type: 'PERSON' }] },
      ]);
      const e = await t.call('GET', bankPath('ents', '/entities'));
      assert.equal(e.status, 200);
      assert.deepEqual(
        e.body.items.map((x: any) => [x.name, x.mention_count]),
        [
          ['Hank', 2],
          ['Ivy', 1],
        ],
      );
      for (const k of ['id', 'name', 'type', 'aliases', 'mention_count', 'first_seen', 'last_seen'])
        assert.ok(k in e.body.items[0]);
      const d = await t.call('DELETE', bankPath('ents'));
      // The forget's signed receipt (test/security/forget.test.ts checks its counts).
      const { receipt, ...body } = d.body;
      assert.equal(receipt.subject.kind, 'bank');
      assert.equal(receipt.subject.bank_id, 'ents');
      assert.deepEqual(body, {
        deleted: true,
        bank_id: 'ents',
        memories_deleted: 2,
        // Hindsight's DeleteResponse beside mnemo's fields.
        success: true,
        deleted_count: 2,
        message: "bank 'ents' and its 2 memories deleted",
      });
      assert.equal((await t.call('GET', bankPath('ents'))).status, 404);
    });

    test('reflect answers extractively from the bank', async () => {
      await retain('refl', [
        { content: 'Jane is allergic to peanuts', timestamp: '2024-02-02T00:00:00Z' },
        { content: 'Jane runs marathons' },
      ]);
      const r = await t.call('POST', bankPath('refl', '/reflect'), {
        body: { query: 'Is Jane allergic to anything?' },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.mode, 'extractive');
      assert.match(r.body.response, /allergic to peanuts/);
      assert.equal(r.body.text, r.body.response);
      assert.ok(r.body.usage.tokens_used > 0);
      assert.equal(r.body.based_on.memories[0].text, 'Jane is allergic to peanuts');
      const schema = await t.call('POST', bankPath('refl', '/reflect'), {
        body: { query: 'x', response_schema: { type: 'object' } },
      });
      assert.equal(schema.status, 422);
      assert.equal(schema.body.error.code, 'llm_required');
    });
  });
}
