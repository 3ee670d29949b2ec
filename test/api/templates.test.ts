/**
 * Bank templates: `GET .../export` (a bank's settings, mission, directives and mental model
 * definitions as a manifest),
 * `POST .../import` (applied all or nothing, or a dry run that changes nothing) and the
 * manifest's JSON Schema at `GET /v1/bank-template-schema`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { newMasterKey } from '../security/encryption-helpers.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const MANIFEST = {
  version: '1',
  bank: {
    reflect_mission: 'Help the support team remember customers.',
    retain_extraction_mode: 'verbose',
    disposition_empathy: 5,
    enable_observations: false,
    mission: 'I am the support desk’s memory.',
  },
  directives: [
    { name: 'Empathy', content: 'Always answer with empathy.', priority: 10 },
    { name: 'No refunds', content: 'Never promise a refund.', tags: ['billing'], is_active: false },
  ],
};

for (const engine of ENGINES) {
  describe(`bank templates (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine, { masterKey: newMasterKey() });
    });
    after(() => t.close());

    const importTo = (bank: string, body: unknown, dry = false) =>
      t.call('POST', bankPath(bank, `/import${dry ? '?dry_run=true' : ''}`), { body });
    const state = async (bank: string) => [
      (await t.call('GET', bankPath(bank))).body,
      (await t.call('GET', bankPath(bank, '/config'))).body.overrides,
      (await t.call('GET', bankPath(bank, '/directives'))).body.items,
    ];

    test('a dry run reports what would change and creates nothing', async () => {
      const r = await importTo('tpl', MANIFEST, true);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.dry_run, true);
      assert.equal(r.body.bank_created, true);
      assert.equal(r.body.config_applied, true);
      assert.deepEqual(r.body.config_changed.sort(), [
        'disposition_empathy',
        'enable_observations',
        'mission',
        'reflect_mission',
        'retain_extraction_mode',
      ]);
      assert.deepEqual(r.body.directives_created, ['Empathy', 'No refunds']);
      assert.deepEqual(r.body.directives_updated, []);
      assert.equal((await t.call('GET', bankPath('tpl'))).status, 404, 'no bank was created');
    });

    test('an import creates the bank and applies settings, mission and directives; export gives them back', async () => {
      const r = await importTo('tpl', MANIFEST);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.dry_run, false);
      const [bank, overrides, directives] = await state('tpl');
      assert.equal(bank.mission, MANIFEST.bank.mission);
      assert.equal(bank.disposition.empathy, 5);
      assert.equal(overrides.reflect_mission, MANIFEST.bank.reflect_mission);
      assert.equal(overrides.retain_extraction_mode, 'verbose');
      assert.deepEqual(
        directives.map((d: any) => [d.name, d.text, d.priority, d.active, d.tags]),
        [
          ['Empathy', 'Always answer with empathy.', 10, true, []],
          ['No refunds', 'Never promise a refund.', 0, false, ['billing']],
        ],
      );

      const exported = await t.call('GET', bankPath('tpl', '/export'));
      assert.equal(exported.status, 200);
      assert.equal(exported.body.version, '1');
      assert.equal(exported.body.bank.disposition_empathy, 5);
      assert.equal(exported.body.bank.recall_default_budget, 'mid', 'every setting, as in effect');
      assert.equal(exported.body.bank.encryption, undefined, 'never the encryption');
      // Another bank set up from the export is the same, and importing it again changes nothing.
      assert.equal((await importTo('copy', exported.body)).status, 200);
      const [copy, copyOverrides, copyDirectives] = await state('copy');
      assert.equal(copy.mission, bank.mission);
      assert.deepEqual(
        (await t.call('GET', bankPath('copy', '/config'))).body.config,
        (await t.call('GET', bankPath('tpl', '/config'))).body.config,
      );
      assert.ok(Object.keys(copyOverrides).length > 0);
      assert.deepEqual(
        copyDirectives.map((d: any) => [d.name, d.text, d.priority, d.active, d.tags]),
        directives.map((d: any) => [d.name, d.text, d.priority, d.active, d.tags]),
      );
      const again = await importTo('copy', exported.body);
      assert.deepEqual(
        [again.body.config_applied, again.body.directives_created, again.body.directives_updated],
        [false, [], []],
      );
    });

    test('directives are matched by name: updated, others created; unmentioned ones stay', async () => {
      const before = (await state('tpl'))[2];
      const r = await importTo('tpl', {
        version: '1',
        directives: [
          { name: 'Empathy', content: 'Answer warmly.', priority: 3 },
          { name: 'Sign off', content: 'Sign with the team name.' },
        ],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(
        [r.body.directives_updated, r.body.directives_created, r.body.config_applied],
        [['Empathy'], ['Sign off'], false],
      );
      const after = (await state('tpl'))[2];
      assert.equal(after.length, 3);
      const empathy = after.find((d: any) => d.name === 'Empathy');
      assert.equal(
        empathy.id,
        before.find((d: any) => d.name === 'Empathy').id,
        'the same directive, updated',
      );
      assert.equal(empathy.text, 'Answer warmly.');
      assert.ok(after.some((d: any) => d.name === 'No refunds'));
    });

    test('bad manifests are 400s naming the problem, and change nothing', async () => {
      const before = await state('tpl');
      const bad: [unknown, RegExp][] = [
        [{ bank: {} }, /version/],
        [{ version: '2' }, /version/],
        [{ version: '1', bank: { entity_labels: [] } }, /entity_labels/],
        [{ version: '1', bank: { encryption: 'none' } }, /encryption/],
        [{ version: '1', bank: { disposition_empathy: 9 } }, /disposition_empathy/],
        [
          {
            version: '1',
            directives: [
              { name: 'x', content: 'a' },
              { name: 'x', content: 'b' },
            ],
          },
          /twice/,
        ],
        [{ version: '1', directives: [{ name: 'x' }] }, /content/],
        [
          {
            version: '1',
            directives: Array.from({ length: 101 }, (_, i) => ({ name: `d${i}`, content: 'c' })),
          },
          /directives/,
        ],
        [
          {
            version: '1',
            mental_models: [
              { id: 'm', name: 'M', source_query: 'q' },
              { id: 'm', name: 'N', source_query: 'r' },
            ],
          },
          /twice/,
        ],
        [{ version: '1', mental_models: [{ id: 'Bad id', name: 'M', source_query: 'q' }] }, /id/],
        [{ version: '1', mental_models: [{ id: 'm', name: 'M' }] }, /source_query/],
        [{ version: '1', mental_models: [{ id: 'm', name: ' ', source_query: 'q' }] }, /name/],
        [
          {
            version: '1',
            mental_models: [{ id: 'm', name: 'M', source_query: 'q', trigger: { mode: 'delta' } }],
          },
          /delta/,
        ],
        [
          {
            version: '1',
            bank: { disposition_empathy: 1 },
            mental_models: [{ id: 'm', name: 'M', source_query: 'word '.repeat(700) }],
          },
          /source_query/,
        ],
      ];
      for (const [body, message] of bad) {
        const r = await importTo('tpl', body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.match(JSON.stringify(r.body.error), message, JSON.stringify(r.body));
      }
      assert.deepEqual(await state('tpl'), before);
    });

    test('an import past the directive limit changes nothing, not even the settings', async () => {
      const many = Array.from({ length: 98 }, (_, i) => ({ name: `rule ${i}`, content: `Rule ${i}.` }));
      const before = await state('tpl');
      const r = await importTo('tpl', { version: '1', bank: { disposition_empathy: 1 }, directives: many });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.deepEqual(await state('tpl'), before);
      // The store's own check, under the bank's lock (a concurrent creation passed core's): the
      // settings and the directive update written before it are rolled back.
      const empathy = (before[2] as any[]).find((d) => d.name === 'Empathy');
      const fields = { name: 'Empathy', text: 'changed', priority: 0, tags: [], active: true };
      const applied = await t.raw.applyBankTemplate(
        'default',
        'tpl',
        {
          config: { disposition_empathy: 1 },
          mission: 'changed',
          updateDirectives: [{ id: empathy.id, ...fields }],
          createDirectives: [{ id: '00000000-0000-4000-8000-000000000001', ...fields }],
          createMentalModels: [],
          updateMentalModels: [],
        },
        3,
        50,
      );
      assert.equal(applied, 'full');
      assert.deepEqual(await state('tpl'), before);
    });

    const models = async (bank: string) => {
      const r = await t.call('GET', bankPath(bank, '/mental-models?detail=content'));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.items;
    };
    const MODELS = [
      {
        id: 'churn-risk',
        name: 'Churn risk',
        source_query: 'Which customers are unhappy, and why?',
        tags: ['billing'],
        max_tokens: 512,
        trigger: { refresh_after_consolidation: true, fact_types: ['world'] },
      },
      { id: 'vip', name: 'VIP customers', source_query: 'Who are our most valuable customers?' },
    ];

    test('mental models: a dry run writes nothing; an import creates them and queues their refresh', async () => {
      const dry = await importTo('mm', { version: '1', mental_models: MODELS }, true);
      assert.equal(dry.status, 200, JSON.stringify(dry.body));
      assert.deepEqual(
        [dry.body.mental_models_created, dry.body.mental_models_updated, dry.body.operation_ids],
        [['churn-risk', 'vip'], [], []],
      );
      assert.equal((await t.call('GET', bankPath('mm'))).status, 404, 'no bank was created');

      const r = await importTo('mm', { version: '1', mental_models: MODELS });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.mental_models_created, ['churn-risk', 'vip']);
      assert.equal(r.body.operation_ids.length, 1);
      const op = await t.call('GET', bankPath('mm', `/operations/${r.body.operation_ids[0]}`));
      assert.equal(op.body.kind, 'refresh_mental_model', JSON.stringify(op.body));
      const kept = await models('mm');
      assert.deepEqual(
        kept.map((m: any) => [
          m.id,
          m.name,
          m.source_query,
          m.tags,
          m.max_tokens,
          m.refresh_pending || m.last_refreshed_at !== null,
        ]),
        [
          ['churn-risk', 'Churn risk', MODELS[0]!.source_query, ['billing'], 512, true],
          ['vip', 'VIP customers', MODELS[1]!.source_query, [], 2048, true],
        ],
      );
      assert.equal(kept[0].trigger.refresh_after_consolidation, true);
      assert.deepEqual(kept[0].trigger.fact_types, ['world']);

      // A dry run of a changed definition reports the update and changes nothing.
      const changed = { ...MODELS[1]!, source_query: 'Who spends the most?' };
      const dryUpdate = await importTo('mm', { version: '1', mental_models: [changed] }, true);
      assert.deepEqual(
        [dryUpdate.body.mental_models_created, dryUpdate.body.mental_models_updated],
        [[], ['vip']],
      );
      assert.equal((await models('mm'))[1].source_query, MODELS[1]!.source_query);
    });

    test('mental models round trip: export, import into a new bank, re-import updates, never duplicates', async () => {
      const exported = (await t.call('GET', bankPath('mm', '/export'))).body;
      assert.equal(exported.mental_models.length, 2);
      assert.equal(exported.mental_models[0].content, undefined, 'definitions, not content');
      const copied = await importTo('mm-copy', exported);
      assert.equal(copied.status, 200, JSON.stringify(copied.body));
      assert.deepEqual(copied.body.mental_models_created, ['churn-risk', 'vip']);
      assert.deepEqual(
        (await t.call('GET', bankPath('mm-copy', '/export'))).body.mental_models,
        exported.mental_models,
      );

      const again = await importTo('mm-copy', exported);
      assert.deepEqual(
        [again.body.mental_models_created, again.body.mental_models_updated, again.body.operation_ids],
        [[], [], []],
        'the same definitions change nothing',
      );
      const before = await models('mm-copy');
      const changed = { ...exported.mental_models[1], source_query: 'Who spends the most?', tags: ['sales'] };
      const updated = await importTo('mm-copy', { version: '1', mental_models: [changed] });
      assert.deepEqual(
        [
          updated.body.mental_models_created,
          updated.body.mental_models_updated,
          updated.body.operation_ids.length,
        ],
        [[], ['vip'], 1],
      );
      const after = await models('mm-copy');
      assert.equal(after.length, 2, 'updated, not duplicated');
      const vip = after.find((m: any) => m.id === 'vip');
      assert.deepEqual([vip.source_query, vip.tags], ['Who spends the most?', ['sales']]);
      assert.equal(vip.created_at, before.find((m: any) => m.id === 'vip').created_at, 'the same model');
      assert.deepEqual(
        after.find((m: any) => m.id === 'churn-risk').source_query,
        MODELS[0]!.source_query,
        'unmentioned models stay',
      );
    });

    test('an import past the mental model limit is refused before anything is written', async () => {
      const before = [await state('mm'), await models('mm')];
      const many = Array.from({ length: 49 }, (_, i) => ({
        id: `m${i}`,
        name: `M ${i}`,
        source_query: `Q ${i}?`,
      }));
      const r = await importTo('mm', { version: '1', bank: { disposition_empathy: 2 }, mental_models: many });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.match(r.body.error.message, /mental models/);
      assert.deepEqual([await state('mm'), await models('mm')], before);
      const tooLong = Array.from({ length: 51 }, (_, i) => ({ id: `m${i}`, name: 'M', source_query: 'Q?' }));
      assert.equal((await importTo('mm', { version: '1', mental_models: tooLong })).status, 400);
      // The store's own check under the bank's lock: an id taken meanwhile rolls everything back.
      const taken = { id: 'vip', name: 'X', source_query: 'X?', tags: [], max_tokens: 100, trigger: {} };
      const applied = await t.raw.applyBankTemplate(
        'default',
        'mm',
        {
          config: { disposition_empathy: 2 },
          createDirectives: [],
          updateDirectives: [],
          createMentalModels: [taken],
          updateMentalModels: [{ ...taken, id: 'churn-risk' }],
        },
        100,
        50,
      );
      assert.equal(applied, 'full');
      assert.deepEqual([await state('mm'), await models('mm')], before);
    });

    test('in an encrypted bank the imported mission and directives are sealed', async () => {
      assert.equal((await t.call('PUT', bankPath('sealed'), { body: {} })).status, 200);
      const enc = { body: { updates: { encryption: 'managed' } } };
      assert.equal((await t.call('PATCH', bankPath('sealed', '/config'), enc)).status, 200);
      assert.equal((await importTo('sealed', { ...MANIFEST, mental_models: MODELS })).status, 200);
      const rawModels = await t.raw.listMentalModels('default', 'sealed', { limit: 10, offset: 0 });
      assert.equal(rawModels.items.length, 2);
      assert.doesNotMatch(
        JSON.stringify(rawModels),
        /customers|Churn risk/i,
        'ids stay plain, text is sealed',
      );
      const raw = await t.raw.getBank('default', 'sealed');
      assert.doesNotMatch(JSON.stringify(raw), /support desk|support team/);
      const rawDirectives = await t.raw.listDirectives('default', 'sealed');
      assert.equal(rawDirectives.length, 2);
      assert.doesNotMatch(JSON.stringify(rawDirectives), /empathy|refund/i);
      const exported = (await t.call('GET', bankPath('sealed', '/export'))).body;
      assert.equal(exported.bank.mission, MANIFEST.bank.mission);
      assert.deepEqual(exported.directives.map((d: any) => d.content).sort(), [
        'Always answer with empathy.',
        'Never promise a refund.',
      ]);
      assert.deepEqual(
        exported.mental_models.map((m: any) => [m.name, m.source_query]),
        MODELS.map((m) => [m.name, m.source_query]),
      );
    });

    test('the JSON Schema validates the manifests export gives and refuses bad ones; no key needed', async () => {
      const r = await t.call('GET', '/v1/bank-template-schema', { token: null });
      assert.equal(r.status, 200);
      const validate = new Ajv2020({ strict: false }).compile(r.body);
      assert.ok(
        validate((await t.call('GET', bankPath('tpl', '/export'))).body),
        JSON.stringify(validate.errors),
      );
      assert.ok(validate(MANIFEST));
      assert.ok(!validate({ version: '1', bank: { disposition_empathy: 9 } }));
      assert.ok(!validate({ version: '1', surprise: true }));
    });
  });
}
