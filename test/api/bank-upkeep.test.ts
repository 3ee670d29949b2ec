/**
 * Hindsight's bank upkeep calls: reset the config, set the disposition or background (older
 * calls), clear the memories, regenerate an entity.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { openAIError, startFakeOpenAI } from '../fakes/openai-server.js';
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

    test('PATCH a bank: identity and Hindsight’s settings in one call, all or nothing', async () => {
      await t.call('PUT', bankPath('pat'), { body: { name: 'Pat' } });
      const r = await t.call('PATCH', bankPath('pat'), {
        body: {
          name: 'Pat the helper',
          reflect_mission: 'Help Pat plan meals',
          disposition: { skepticism: 2, literalism: 4, empathy: 5 },
          disposition_empathy: 1,
          retain_mission: 'Keep food preferences',
          enable_reranking: false,
        },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.bank_id, 'pat');
      assert.equal(r.body.name, 'Pat the helper');
      assert.equal(r.body.mission, 'Help Pat plan meals');
      assert.deepEqual(r.body.disposition, { skepticism: 2, literalism: 4, empathy: 1 });
      const cfg = (await t.call('GET', bankPath('pat', '/config'))).body.config;
      assert.equal(cfg.retain_mission, 'Keep food preferences');
      assert.equal(cfg.enable_reranking, false);
      const bad = await t.call('PATCH', bankPath('pat'), {
        body: { name: 'Renamed', disposition_empathy: 9 },
      });
      assert.equal(bad.status, 400);
      assert.equal((await t.call('GET', bankPath('pat'))).body.name, 'Pat the helper', 'nothing changed');
      // mnemo's own call is unchanged: mission (or background), blank clears.
      const own = await t.call('PATCH', bankPath('pat'), { body: { mission: '  ' } });
      assert.equal(own.body.mission, null);
      assert.equal((await t.call('PATCH', bankPath('nobody'), { body: { name: 'x' } })).status, 404);
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

    test('observations: their scopes, and clearing them rewinds consolidation', async () => {
      await retain('obs', [
        { content: 'Carol drinks green tea every morning.', tags: ['user:carol'], fact_type: 'world' },
        { content: 'Carol drinks green tea every morning.', tags: ['user:carol'], fact_type: 'world' },
        { content: 'Dan runs every evening.', fact_type: 'world' },
        { content: 'Dan runs every evening.', fact_type: 'world' },
      ]);
      await consolidateBank(t.services, 'default', 'obs');
      const scopes = await t.call('GET', bankPath('obs', '/observations/scopes'));
      assert.equal(scopes.status, 200);
      assert.deepEqual(scopes.body.scopes.map((x: any) => [x.tags, x.count]).sort(), [
        [[], 1],
        [['user:carol'], 1],
      ]);
      // A client's own observation is not consolidation's: it stays.
      await retain('obs', [{ content: 'Erin seems to like jazz', fact_type: 'observation' }]);
      const before = (await t.call('GET', bankPath('obs', '/stats'))).body;
      assert.equal(before.pending_consolidation, 1);
      const r = await t.call('DELETE', bankPath('obs', '/observations'));
      assert.equal(r.status, 200);
      assert.equal(r.body.success, true);
      assert.equal(r.body.deleted_count, 2);
      const after = (await t.call('GET', bankPath('obs', '/stats'))).body;
      assert.equal(after.nodes_by_fact_type.observation, 1, 'the retained observation stays');
      assert.equal(after.total_nodes, 5);
      assert.equal(after.pending_consolidation, 5, 'every memory is read again');
      assert.deepEqual((await t.call('GET', bankPath('obs', '/observations/scopes'))).body.scopes, []);
      await consolidateBank(t.services, 'default', 'obs');
      assert.equal(
        (await t.call('GET', bankPath('obs', '/observations/scopes'))).body.scopes.length,
        2,
        'rebuilt',
      );
    });

    test('PATCH a document sets its memories’ tags; a chunk is found by its id alone', async () => {
      const r = await retain('docs', [
        { content: 'First part', document_id: 'doc', tags: ['old'] },
        { content: 'Second part', document_id: 'doc', tags: ['old'] },
        { content: 'Elsewhere', tags: ['old'] },
      ]);
      const ids = r.body.memory_ids;
      const p = await t.call('PATCH', bankPath('docs', '/documents/doc'), {
        body: { tags: ['team-a', 'team-b'] },
      });
      assert.equal(p.status, 200);
      assert.deepEqual(p.body, { success: true, document_id: 'doc', memories_updated: 2 });
      const tags = (await t.call('GET', bankPath('docs', '/tags'))).body.items;
      assert.deepEqual(tags.map((x: any) => [x.tag, x.count]).sort(), [
        ['old', 1],
        ['team-a', 2],
        ['team-b', 2],
      ]);
      const tagged = await t.call('POST', bankPath('docs', '/memories/recall'), {
        body: { query: 'part', tags: ['team-a'], tags_match: 'all_strict' },
      });
      assert.deepEqual(tagged.body.results.map((m: any) => m.text).sort(), ['First part', 'Second part']);
      assert.equal(
        (await t.call('PATCH', bankPath('docs', '/documents/nope'), { body: { tags: [] } })).status,
        404,
      );
      const c = await t.call('GET', `/v1/default/chunks/${ids[1]}`);
      assert.equal(c.status, 200);
      assert.deepEqual(
        { ...c.body, created_at: undefined },
        {
          chunk_id: ids[1],
          document_id: 'doc',
          bank_id: 'docs',
          chunk_index: 1,
          chunk_text: 'Second part',
          created_at: undefined,
        },
      );
      assert.equal((await t.call('GET', `/v1/default/chunks/${ids[2]}`)).status, 404, 'no document');
      assert.equal((await t.call('GET', '/v1/default/chunks/nope')).status, 404);
    });

    test('health/llm: not configured without a model; connected, or why not, with one', async () => {
      await t.call('PUT', bankPath('probe'), { body: {} });
      const none = await t.call('POST', bankPath('probe', '/health/llm'));
      assert.equal(none.status, 200);
      assert.deepEqual(
        none.body.operations.map((o: any) => [o.operation, o.ok, o.status]),
        [
          ['retain', false, 'not_configured'],
          ['consolidation', false, 'not_configured'],
          ['reflect', false, 'not_configured'],
        ],
      );
      const openai = await startFakeOpenAI();
      const withModel = await t.reconfigured({
        llm: createOpenAIModel({
          baseUrl: openai.url,
          model: 'fake-model',
          apiKey: 'sk-secret',
          maxRetries: 0,
          timeoutMs: 2000,
        }),
      });
      try {
        openai.respond(() => ({ content: 'pong' }));
        const ok = await withModel.call('POST', bankPath('probe', '/health/llm'));
        assert.ok(
          ok.body.operations.every((o: any) => o.ok && o.status === 'connected' && o.latency_ms >= 0),
        );
        assert.equal(
          openai.requests.filter((r) => r.path.endsWith('/chat/completions')).length,
          1,
          'one call',
        );
        assert.ok((await t.call('GET', bankPath('probe'))).body.llm_usage.input_tokens > 0, 'counted');
        openai.respond(() => openAIError(401, 'Incorrect API key provided: sk-secret'));
        const denied = await withModel.call('POST', bankPath('probe', '/health/llm'));
        assert.ok(denied.body.operations.every((o: any) => !o.ok && o.status === 'auth_failed'));
        assert.doesNotMatch(JSON.stringify(denied.body), /sk-secret|fake-model|127\.0\.0\.1/);
        openai.respond(() => openAIError(500, 'boom'));
        const down = await withModel.call('POST', bankPath('probe', '/health/llm'));
        assert.ok(down.body.operations.every((o: any) => o.status === 'unreachable'));
      } finally {
        await openai.close();
      }
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
        ['DELETE', '/observations', undefined],
        ['POST', '/health/llm', undefined],
      ] as const) {
        const r = await t.call(method, bankPath('who', path, '/v1/me'), { token: retainKey, body });
        assert.equal(r.status, 403, `${method} ${path}`);
        assert.equal(r.body.error.required_scope, 'admin');
      }
    });
  });
}
