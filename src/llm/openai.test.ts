import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatCompletion, openAIError, startFakeOpenAI } from '../../test/fakes/openai-server.js';
import { ask, fakeForSuite, SCHEMA } from '../../test/fakes/suite.js';
import { assertBackoffs, recordedWaits } from '../../test/fakes/waits.js';
import { LlmError } from './errors.js';
import { createOpenAIModel, type OpenAIModelOptions } from './openai.js';

const KEY = 'sk-test-secret-0123456789';

describe('OpenAI-compatible model', () => {
  const fake = fakeForSuite(startFakeOpenAI);
  const model = (options: Partial<OpenAIModelOptions> = {}) =>
    createOpenAIModel({ baseUrl: fake().url, model: 'test-model', apiKey: KEY, ...options });

  test('plain completion sends the chat protocol and reads text and usage', async () => {
    const result = await model().complete(
      ask('hello', { system: 'be brief', maxTokens: 50, temperature: 0 }),
    );
    assert.equal(result.text, 'echo: hello');
    assert.equal(result.model, 'test-model');
    assert.ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0);
    assert.equal(result.json, undefined);
    const [request] = fake().requests;
    assert.equal(request?.path, '/v1/chat/completions');
    assert.equal(request?.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(request?.body, {
      model: 'test-model',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      max_tokens: 50,
      temperature: 0,
    });
  });

  test('structured output asks for json_schema and parses the answer', async () => {
    fake().respond(() => ({ content: '{"a": 1}' }));
    const result = await model().complete(ask('facts?', { jsonSchema: SCHEMA }));
    assert.deepEqual(result.json, { a: 1 });
    assert.deepEqual(fake().requests[0]?.body.response_format, {
      type: 'json_schema',
      json_schema: { name: 'facts', schema: SCHEMA.schema, strict: false },
    });
  });

  test('falls back to json_object with the schema in the prompt when json_schema is rejected', async () => {
    fake().respond((body) =>
      body.response_format.type === 'json_schema'
        ? openAIError(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported")
        : { content: '{"a": 2}' },
    );
    const llm = model();
    const result = await llm.complete(ask('facts?', { system: 'sys', jsonSchema: SCHEMA }));
    assert.deepEqual(result.json, { a: 2 });
    assert.equal(fake().requests.length, 2);
    const retry = fake().requests[1]?.body;
    assert.deepEqual(retry.response_format, { type: 'json_object' });
    assert.match(retry.messages[0].content, /^sys\n\n.*JSON Schema:\n\{"type":"object"/s);
    // Remembered: the next call goes straight to json_object.
    await llm.complete(ask('again', { jsonSchema: SCHEMA }));
    assert.equal(fake().requests.length, 3);
    assert.deepEqual(fake().requests[2]?.body.response_format, { type: 'json_object' });
  });

  test('switches to max_completion_tokens when a model refuses max_tokens', async () => {
    fake().respond((body) =>
      'max_tokens' in body
        ? openAIError(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.")
        : undefined,
    );
    const result = await model().complete(ask('hi', { maxTokens: 20 }));
    assert.equal(result.text, 'echo: hi');
    assert.equal(fake().requests[1]?.body.max_completion_tokens, 20);
  });

  test('a 400 about something else is not retried', async () => {
    fake().respond(() => openAIError(400, 'messages must not be empty'));
    await assert.rejects(model().complete(ask('hi')), {
      name: 'LlmError',
      kind: 'provider_error',
      status: 400,
    });
    assert.equal(fake().requests.length, 1);
  });

  test('broken JSON is repaired locally without another call', async () => {
    fake().respond(() => ({ content: "Here:\n```json\n{'a': 3, 'ok': True,}\n```" }));
    const result = await model().complete(ask('facts?', { jsonSchema: SCHEMA }));
    assert.deepEqual(result.json, { a: 3, ok: true });
    assert.equal(fake().requests.length, 1);
  });

  test('unparsable JSON gets one repair call', async () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5 };
    fake().respond((_body, n) => ({
      json: chatCompletion(n === 0 ? 'Sure, the answer is three.' : '{"a": 3}', 'test-model', usage),
    }));
    const result = await model().complete(ask('facts?', { jsonSchema: SCHEMA }));
    assert.deepEqual(result.json, { a: 3 });
    assert.equal(fake().requests.length, 2);
    const messages = fake().requests[1]?.body.messages;
    assert.deepEqual(messages.slice(0, 2), [
      { role: 'user', content: 'facts?' },
      { role: 'assistant', content: 'Sure, the answer is three.' },
    ]);
    assert.match(messages[2].content, /only the JSON/);
    assert.deepEqual(result.usage, { inputTokens: 20, outputTokens: 10 });
  });

  test('hopeless JSON ends in bad_response after exactly one repair call', async () => {
    fake().respond(() => ({ content: 'I would rather not.' }));
    await assert.rejects(model().complete(ask('facts?', { jsonSchema: SCHEMA })), {
      name: 'LlmError',
      kind: 'bad_response',
    });
    assert.equal(fake().requests.length, 2);
  });

  test('429 with Retry-After: the client waits what the server asks, then succeeds', async () => {
    fake().respond((_body, n) =>
      n === 0 ? { ...openAIError(429, 'Rate limit reached'), headers: { 'retry-after': '0.6' } } : undefined,
    );
    const { waits, sleep } = recordedWaits();
    const result = await model({ sleep }).complete(ask('hi'));
    assert.equal(result.text, 'echo: hi');
    assert.equal(fake().requests.length, 2);
    assert.deepEqual(waits, [600], 'Retry-After 0.6 s, not the backoff');
  });

  test('retry-after-ms is honoured before Retry-After', async () => {
    fake().respond((_body, n) =>
      n === 0
        ? {
            ...openAIError(429, 'Rate limit reached'),
            headers: { 'retry-after-ms': '250', 'retry-after': '9' },
          }
        : undefined,
    );
    const { waits, sleep } = recordedWaits();
    await model({ sleep }).complete(ask('hi'));
    assert.deepEqual(waits, [250]);
  });

  test("the default wait is a real timer, which the caller's abort cuts short", async () => {
    const controller = new AbortController();
    const gaveUp = new Error('caller gave up');
    fake().respond(() => {
      // Long enough for the 503 to reach the client, which is then asked to wait 20 s.
      setTimeout(() => controller.abort(gaveUp), 100);
      return { ...openAIError(503, 'busy'), headers: { 'retry-after': '20' } };
    });
    await assert.rejects(model().complete(ask('hi', { signal: controller.signal })), (err) => err === gaveUp);
    assert.equal(fake().requests.length, 1, 'no retry before the 20 s were up');
  });

  test('a 429 that never clears is rate_limited', async () => {
    fake().respond(() => ({ ...openAIError(429, 'Rate limit reached'), headers: { 'retry-after': '0' } }));
    const { waits, sleep } = recordedWaits();
    await assert.rejects(model({ maxRetries: 1, sleep }).complete(ask('hi')), {
      kind: 'rate_limited',
      status: 429,
    });
    assert.equal(fake().requests.length, 2);
    assert.deepEqual(waits, [0], 'Retry-After: 0 is no wait');
  });

  test('500 forever is provider_error after the retries, with growing backoffs', async () => {
    fake().respond(() => openAIError(500, 'The server had an error'));
    const { waits, sleep } = recordedWaits();
    await assert.rejects(model({ maxRetries: 2, sleep }).complete(ask('hi')), (err) => {
      assert.ok(err instanceof LlmError);
      assert.equal(err.kind, 'provider_error');
      assert.equal(err.status, 500);
      assert.match(err.message, /The server had an error/);
      return true;
    });
    assert.equal(fake().requests.length, 3);
    assertBackoffs(waits, [0, 1]);
  });

  test('a reply slower than timeoutMs is a timeout, not retried', async () => {
    fake().respond(() => ({ delayMs: 2_000 }));
    const started = Date.now();
    await assert.rejects(model({ timeoutMs: 50 }).complete(ask('hi')), {
      name: 'LlmError',
      kind: 'timeout',
    });
    assert.ok(Date.now() - started < 1_500);
    assert.equal(fake().requests.length, 1);
  });

  test("the caller's abort is rethrown as is", async () => {
    fake().respond(() => ({ delayMs: 2_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(model().complete(ask('hi', { signal: controller.signal })), { name: 'AbortError' });
  });

  test('concurrency limit is respected', async () => {
    // A server of its own, so the in-flight high-water mark counts only these requests.
    const busy = await startFakeOpenAI({ handler: () => ({ delayMs: 60 }) });
    try {
      const llm = createOpenAIModel({ baseUrl: busy.url, model: 'm', concurrency: 2 });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => llm.complete(ask(`q${i}`))));
      assert.deepEqual(
        results.map((r) => r.text),
        Array.from({ length: 6 }, (_, i) => `echo: q${i}`),
      );
      assert.equal(busy.maxInFlight, 2);
      assert.equal(busy.requests[0]?.headers.authorization, undefined);
    } finally {
      await busy.close();
    }
  });

  test('the API key never appears in error messages', async () => {
    fake().respond(() => openAIError(401, `Incorrect API key provided: ${KEY}.`));
    await assert.rejects(model().complete(ask('hi')), (err) => {
      assert.ok(err instanceof LlmError);
      assert.equal(err.status, 401);
      assert.match(err.message, /Incorrect API key provided: \[redacted\]/);
      assert.ok(!String(err).includes(KEY) && !err.stack?.includes(KEY));
      return true;
    });
  });

  test('an unreachable server is a network error', async () => {
    const gone = await startFakeOpenAI();
    await gone.close();
    const llm = createOpenAIModel({ baseUrl: gone.url, model: 'm', apiKey: KEY, maxRetries: 0 });
    await assert.rejects(llm.complete(ask('hi')), (err) => {
      assert.ok(err instanceof LlmError);
      assert.equal(err.kind, 'network');
      assert.ok(!err.message.includes(KEY));
      return true;
    });
  });

  test('a reply without choices is bad_response', async () => {
    fake().respond(() => ({ json: { object: 'chat.completion' } }));
    await assert.rejects(model().complete(ask('hi')), { kind: 'bad_response' });
  });
});
