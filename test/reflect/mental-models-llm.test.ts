/**
 * Mental models with a language model (the fake OpenAI-compatible server): a refresh runs
 * Reflect's prompt over the source query and keeps the model's answer; a dry run asks the model
 * again and stores nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const BANK = 'alice';
const mm = (rest = '') => bankPath(BANK, `/mental-models${rest}`);

for (const engine of ENGINES) {
  describe(`mental models with a language model (${engine})`, () => {
    let plain: TestApp;
    let t: TestApp;
    let fake: FakeOpenAI;
    let answer = '';

    const done = async (app: TestApp, operationId: string) => {
      const op = await until(
        async () => (await app.call('GET', bankPath(BANK, `/operations/${operationId}`))).body,
        (o) => o.status === 'completed' || o.status === 'failed',
      );
      assert.equal(op.status, 'completed', JSON.stringify(op));
    };
    const chats = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions'));

    before(async () => {
      fake = await startFakeOpenAI();
      fake.respond(() => ({ content: answer }));
      // Only the app with the model runs operations.
      plain = await testApp(engine);
      // No consolidation: the fake answers only the mental models' Reflects.
      const cfg = await plain.call('PUT', bankPath(BANK), { body: { enable_observations: false } });
      assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
      const r = await plain.call('POST', bankPath(BANK, '/memories'), {
        body: {
          items: [
            { content: 'Alice is training for the Berlin marathon in September.' },
            { content: 'Alice hurt her knee while running last week.' },
          ],
        },
      });
      assert.equal(r.status, 200);
      t = await plain.reconfigured({
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
        runWorker: true,
      });
    });
    after(async () => {
      await plain.close();
      await fake.close();
    });

    test('a refresh keeps the model’s answer to the source query', async () => {
      answer = 'Alice trains for the Berlin marathon, careful of a sore knee.';
      const made = await t.call('POST', mm(), {
        body: {
          id: 'training',
          name: 'Training',
          source_query: 'How is Alice’s training going?',
          max_tokens: 300,
        },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      await done(t, made.body.operation_id);
      const m = (await t.call('GET', mm('/training'))).body;
      assert.equal(m.content, answer);
      assert.equal(m.reflect_response.mode, 'llm');
      assert.ok(m.reflect_response.usage.tokens_used > 0);
      assert.equal(m.is_stale, false);
      const call = chats().at(-1)!.body as {
        max_tokens?: number;
        max_completion_tokens?: number;
        messages: any[];
      };
      const prompt = call.messages.map((x) => x.content).join('\n');
      assert.match(prompt, /How is Alice’s training going\?/);
      assert.match(prompt, /Berlin marathon/, 'the memories Reflect found are in the prompt');
      assert.equal(
        call.max_tokens ?? call.max_completion_tokens,
        300,
        "the model's max_tokens bounds the answer",
      );
    });

    test('a dry run asks the model again and stores nothing', async () => {
      const before = (await t.call('GET', mm('/training'))).body;
      const calls = chats().length;
      answer = 'Alice trains for Berlin; her knee needs rest.';
      const dry = await t.call('POST', mm('/training/dry-run-refresh'));
      assert.equal(dry.status, 200, JSON.stringify(dry.body));
      assert.equal(chats().length, calls + 1);
      assert.equal(dry.body.mode, 'llm');
      assert.equal(dry.body.current_content, before.content);
      assert.equal(dry.body.preview_content, answer);
      assert.match(dry.body.diff, /^-Alice trains for the Berlin marathon/m);
      assert.match(dry.body.diff, /^\+Alice trains for Berlin; her knee/m);
      const after = (await t.call('GET', mm('/training'))).body;
      assert.equal(after.content, before.content);
      assert.equal((await t.call('GET', mm('/training/history'))).body.length, 1);
    });
  });
}
