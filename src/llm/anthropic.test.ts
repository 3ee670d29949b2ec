import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { anthropicError, startFakeAnthropic } from '../../test/fakes/anthropic-server.js';
import { type AnthropicModelOptions, createAnthropicModel } from './anthropic.js';
import { ask, fakeForSuite, SCHEMA } from '../../test/fakes/suite.js';
import { assertBackoffs, recordedWaits } from '../../test/fakes/waits.js';
import { LlmError } from './errors.js';

const KEY = 'sk-ant-test-secret-0123456789';

describe('Anthropic model', () => {
  const fake = fakeForSuite(startFakeAnthropic);
  const model = (options: Partial<AnthropicModelOptions> = {}) =>
    createAnthropicModel({ baseUrl: fake().url, model: 'claude-test', apiKey: KEY, ...options });

  test('plain completion sends the Messages protocol and reads text and usage', async () => {
    const result = await model().complete(ask('hello', { system: 'be brief', temperature: 0.2 }));
    assert.equal(result.text, 'echo: hello');
    assert.equal(result.model, 'claude-test');
    assert.ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0);
    assert.equal(result.json, undefined);
    const [request] = fake().requests;
    assert.equal(request?.path, '/v1/messages');
    assert.equal(request?.headers['x-api-key'], KEY);
    assert.equal(request?.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(request?.body, {
      model: 'claude-test',
      max_tokens: 1024,
      system: 'be brief',
      temperature: 0.2,
      messages: [{ role: 'user', content: 'hello' }],
    });
  });

  test('structured output forces one tool and reads its input', async () => {
    fake().respond(() => ({ toolInput: { a: 1 } }));
    const result = await model().complete(ask('facts?', { jsonSchema: SCHEMA, maxTokens: 200 }));
    assert.deepEqual(result.json, { a: 1 });
    assert.equal(result.text, '{"a":1}');
    const body = fake().requests[0]?.body;
    assert.equal(body.max_tokens, 200);
    assert.deepEqual(body.tool_choice, { type: 'tool', name: 'facts' });
    assert.equal(body.tools.length, 1);
    assert.equal(body.tools[0].name, 'facts');
    assert.deepEqual(body.tools[0].input_schema, SCHEMA.schema);
  });

  test('a text answer instead of the tool is repaired locally', async () => {
    fake().respond(() => ({ text: 'Result: {a: 2, b: None,' }));
    const result = await model().complete(ask('facts?', { jsonSchema: SCHEMA }));
    assert.deepEqual(result.json, { a: 2, b: null });
    assert.equal(fake().requests.length, 1);
  });

  test('unparsable JSON gets one repair call', async () => {
    fake().respond((_body, n) => (n === 0 ? { text: 'No JSON today.' } : { toolInput: { a: 3 } }));
    const result = await model().complete(ask('facts?', { jsonSchema: SCHEMA }));
    assert.deepEqual(result.json, { a: 3 });
    assert.equal(fake().requests.length, 2);
    const messages = fake().requests[1]?.body.messages;
    assert.deepEqual(messages[1], { role: 'assistant', content: 'No JSON today.' });
    assert.equal(messages[2].role, 'user');
  });

  test('hopeless JSON ends in bad_response after exactly one repair call', async () => {
    fake().respond(() => ({ text: 'Still no JSON.' }));
    await assert.rejects(model().complete(ask('facts?', { jsonSchema: SCHEMA })), {
      name: 'LlmError',
      kind: 'bad_response',
    });
    assert.equal(fake().requests.length, 2);
  });

  test('429 with Retry-After: the client waits what the server asks, then succeeds', async () => {
    fake().respond((_body, n) =>
      n === 0
        ? {
            ...anthropicError(429, 'rate_limit_error', 'Too many requests'),
            headers: { 'retry-after': '0.6' },
          }
        : undefined,
    );
    const { waits, sleep } = recordedWaits();
    const result = await model({ sleep }).complete(ask('hi'));
    assert.equal(result.text, 'echo: hi');
    assert.equal(fake().requests.length, 2);
    assert.deepEqual(waits, [600], 'Retry-After 0.6 s, not the backoff');
  });

  test('529 overloaded is retried', async () => {
    fake().respond((_body, n) => (n === 0 ? { status: 529, headers: { 'retry-after': '0' } } : undefined));
    const result = await model().complete(ask('hi'));
    assert.equal(result.text, 'echo: hi');
    assert.equal(fake().requests.length, 2);
  });

  test('500 forever is provider_error after the retries, with a backoff between', async () => {
    fake().respond(() => anthropicError(500, 'api_error', 'Internal server error'));
    const { waits, sleep } = recordedWaits();
    await assert.rejects(model({ maxRetries: 1, sleep }).complete(ask('hi')), {
      name: 'LlmError',
      kind: 'provider_error',
      status: 500,
      message: 'anthropic: HTTP 500: Internal server error',
    });
    assert.equal(fake().requests.length, 2);
    assertBackoffs(waits, [0]);
  });

  test('a reply slower than timeoutMs is a timeout', async () => {
    fake().respond(() => ({ delayMs: 2_000 }));
    await assert.rejects(model({ timeoutMs: 50 }).complete(ask('hi')), {
      name: 'LlmError',
      kind: 'timeout',
    });
    assert.equal(fake().requests.length, 1);
  });

  test('concurrency limit is respected', async () => {
    const busy = await startFakeAnthropic({ handler: () => ({ delayMs: 60 }) });
    try {
      const llm = createAnthropicModel({ baseUrl: busy.url, model: 'm', apiKey: KEY, concurrency: 3 });
      await Promise.all(Array.from({ length: 7 }, (_, i) => llm.complete(ask(`q${i}`))));
      assert.equal(busy.requests.length, 7);
      assert.equal(busy.maxInFlight, 3);
    } finally {
      await busy.close();
    }
  });

  test('the API key never appears in error messages', async () => {
    fake().respond(() => anthropicError(401, 'authentication_error', `invalid x-api-key ${KEY}`));
    await assert.rejects(model().complete(ask('hi')), (err) => {
      assert.ok(err instanceof LlmError);
      assert.equal(err.kind, 'provider_error');
      assert.equal(err.status, 401);
      assert.ok(!String(err).includes(KEY) && !err.stack?.includes(KEY));
      assert.match(err.message, /\[redacted\]/);
      return true;
    });
  });

  test('a reply without content is bad_response', async () => {
    fake().respond(() => ({ json: { type: 'message' } }));
    await assert.rejects(model().complete(ask('hi')), { kind: 'bad_response' });
  });
});
