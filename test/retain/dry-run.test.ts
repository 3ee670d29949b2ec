/**
 * `POST .../memories/dry-run-extract`: Retain's extraction on one item, with the bank's
 * settings or others tried for the call, storing nothing — without a model and with one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const TEXT = 'Caroline: I went to a support group yesterday. I love painting at sunrise!';

for (const engine of ENGINES) {
  describe(`dry-run extraction (${engine})`, () => {
    let t: TestApp;
    let withModel: TestApp;
    let openai: FakeOpenAI;
    before(async () => {
      openai = await startFakeOpenAI();
      t = await testApp(engine);
      withModel = await t.reconfigured({
        llm: createOpenAIModel({ baseUrl: openai.url, model: 'fake-model', maxRetries: 0, timeoutMs: 2000 }),
      });
      assert.equal((await t.call('PUT', bankPath('dry'), { body: {} })).status, 200);
    });
    after(async () => {
      await openai.close();
      await t.close();
    });

    const dryRun = (app: TestApp, body: unknown, bank = 'dry') =>
      app.call('POST', bankPath(bank, '/memories/dry-run-extract'), { body });
    /** What the bank holds: memories, documents, operations, model tokens. */
    const holdings = async () => {
      const profile = (await t.call('GET', bankPath('dry'))).body;
      const ops = (await t.call('GET', bankPath('dry', '/operations'))).body.total;
      return [profile.memory_count, profile.document_count, profile.entity_count, ops, profile.llm_usage];
    };

    test('the bank’s own settings: verbatim chunks, nothing stored', async () => {
      const before = await holdings();
      const r = await dryRun(t, {
        content: TEXT,
        timestamp: '2023-05-08T13:56:00Z',
        entities: [{ text: 'Caroline' }],
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.extraction, 'chunks');
      assert.deepEqual(
        r.body.facts.map((f: any) => [f.text, f.entities]),
        [[TEXT, ['Caroline']]],
      );
      assert.equal(r.body.facts[0].occurred_start, '2023-05-07T00:00:00.000Z', 'yesterday, said on May 8');
      assert.deepEqual(r.body.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 });
      assert.deepEqual(await holdings(), before);
    });

    test('settings tried for the call: local extraction splits sentences; the bank is unchanged', async () => {
      const r = await dryRun(t, {
        content: TEXT,
        retain_extraction_mode: 'verbose',
        retain_auto_entities: true,
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.extraction, 'local');
      assert.deepEqual(
        r.body.facts.map((f: any) => f.text),
        ['Caroline: I went to a support group yesterday.', 'Caroline: I love painting at sunrise!'],
      );
      assert.ok(r.body.facts.every((f: any) => f.entities.includes('Caroline')));
      const cfg = (await t.call('GET', bankPath('dry', '/config'))).body.config;
      assert.equal(cfg.retain_extraction_mode, 'chunks');
      const verbatim = await dryRun(t, { content: TEXT, retain_extraction_mode: 'verbatim' });
      assert.equal(verbatim.body.extraction, 'chunks');
      const small = await dryRun(t, { content: 'word '.repeat(400).trim(), retain_chunk_size: 400 });
      assert.ok(small.body.facts.length > 1, 'a smaller chunk size splits the text');
    });

    test('with a model: its facts and its tokens, counted for the bank, and still nothing stored', async () => {
      openai.respond(() => ({
        content: JSON.stringify({
          facts: [
            {
              text: 'Caroline went to a support group on 2023-05-07',
              fact_type: 'experience',
              entities: [{ text: 'Caroline', type: 'PERSON' }],
            },
            { text: 'Caroline loves painting at sunrise', fact_type: 'preference', entities: [] },
          ],
        }),
      }));
      const before = openai.requests.length;
      const r = await dryRun(withModel, {
        content: TEXT,
        retain_extraction_mode: 'custom',
        retain_custom_instructions: 'Keep hobbies.',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.extraction, 'llm');
      assert.deepEqual(
        r.body.facts.map((f: any) => [f.fact_type, f.text]),
        [
          ['experience', 'Caroline went to a support group on 2023-05-07'],
          ['preference', 'Caroline loves painting at sunrise'],
        ],
      );
      assert.ok(r.body.usage.input_tokens > 0 && r.body.usage.output_tokens > 0);
      assert.equal(r.body.usage.total_tokens, r.body.usage.input_tokens + r.body.usage.output_tokens);
      const prompt = JSON.stringify(openai.requests.slice(before).at(-1)?.body);
      assert.match(prompt, /Keep hobbies\./, 'the tried instructions reach the model');
      const profile = (await t.call('GET', bankPath('dry'))).body;
      assert.equal(profile.memory_count, 0);
      assert.equal(profile.llm_usage.input_tokens, r.body.usage.input_tokens);
    });

    test('bad input is a 400; an unknown bank a 404 (and is not created)', async () => {
      for (const body of [
        {},
        { content: '' },
        { content: 'x', retain_extraction_mode: 'telepathy' },
        { content: 'x', retain_chunk_size: 10 },
      ]) {
        const r = await dryRun(t, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.body.error.code, 'validation_error');
      }
      assert.equal((await dryRun(t, { content: 'x' }, 'ghost')).status, 404);
      assert.equal((await t.call('GET', bankPath('ghost'))).status, 404);
      // Hindsight's settings mnemo has not are named, not silently dropped.
      const r = await dryRun(t, { content: 'x', llm_output_language: 'fr' });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('x-ignored-fields') ?? '', /llm_output_language/);
    });

    test('needs the retain scope on /v1/me', async () => {
      const key = async (scopes: string[]) =>
        (await t.call('POST', '/v1/default/projects/default/keys', { body: { name: scopes.join(), scopes } }))
          .body.key;
      const path = bankPath('dry', '/memories/dry-run-extract', '/v1/me');
      const denied = await t.call('POST', path, { token: await key(['recall']), body: { content: 'x' } });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.required_scope, 'retain');
      assert.equal(
        (await t.call('POST', path, { token: await key(['retain']), body: { content: 'x' } })).status,
        200,
      );
    });
  });
}
