import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { anthropicError, type FakeAnthropic, startFakeAnthropic } from './anthropic-server.js';
import { type FakeOpenAI, fakeEmbedding, startFakeOpenAI } from './openai-server.js';

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('fake OpenAI server', () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({ dimensions: 12 });
  });
  after(() => fake.close());

  test('speaks chat completions', async () => {
    const { status, json } = await post(`${fake.url}/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: 'ping' }],
    });
    assert.equal(status, 200);
    assert.equal(json.object, 'chat.completion');
    assert.deepEqual(json.choices[0], {
      index: 0,
      message: { role: 'assistant', content: 'echo: ping' },
      finish_reason: 'stop',
    });
    assert.equal(json.usage.total_tokens, json.usage.prompt_tokens + json.usage.completion_tokens);
  });

  test('serves deterministic unit-length embeddings that reflect shared words', async () => {
    const input = ['Alice likes green tea', 'alice likes tea', 'quarterly tax filing'];
    const { json } = await post(`${fake.url}/embeddings`, { model: 'e', input });
    assert.equal(json.object, 'list');
    const vectors: number[][] = json.data.map((d: { embedding: number[] }) => d.embedding);
    assert.deepEqual(
      json.data.map((d: { index: number }) => d.index),
      [0, 1, 2],
    );
    assert.equal(vectors[0]?.length, 12);
    assert.deepEqual(vectors[0], fakeEmbedding(input[0]!, 12));
    assert.ok(Math.abs(cosine(vectors[0]!, vectors[0]!) - 1) < 1e-9);
    assert.ok(cosine(vectors[0]!, vectors[1]!) > cosine(vectors[0]!, vectors[2]!));
  });

  test('honors dimensions and base64 encoding', async () => {
    const { json } = await post(`${fake.url}/embeddings`, {
      model: 'e',
      input: 'hello',
      dimensions: 20,
      encoding_format: 'base64',
    });
    const bytes = Buffer.from(json.data[0].embedding, 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    assert.equal(decoded.length, 20);
    for (const [i, x] of fakeEmbedding('hello', 20).entries()) assert.ok(Math.abs(x - decoded[i]!) < 1e-6);
  });

  test('answers bad requests and unknown paths in the OpenAI error shape', async () => {
    const missing = await post(`${fake.url}/chat/completions`, { messages: [] });
    assert.equal(missing.status, 400);
    assert.equal(typeof missing.json.error.message, 'string');
    const unknown = await post(`${fake.url}/nope`, {});
    assert.equal(unknown.status, 404);
  });
});

describe('fake Anthropic server', () => {
  let fake: FakeAnthropic;
  const headers = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
  const request = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'ping' }] };
  before(async () => {
    fake = await startFakeAnthropic();
  });
  after(() => fake.close());

  test('speaks messages, with text or a forced tool', async () => {
    const text = await post(`${fake.url}/v1/messages`, request, headers);
    assert.equal(text.json.type, 'message');
    assert.deepEqual(text.json.content, [{ type: 'text', text: 'echo: ping' }]);
    assert.equal(text.json.stop_reason, 'end_turn');
    const tools = [{ name: 'out', input_schema: { type: 'object' } }];
    const tool = await post(
      `${fake.url}/v1/messages`,
      { ...request, tools, tool_choice: { type: 'tool', name: 'out' } },
      headers,
    );
    assert.deepEqual(tool.json.content, [{ type: 'tool_use', id: 'toolu_fake', name: 'out', input: {} }]);
    assert.equal(tool.json.stop_reason, 'tool_use');
  });

  test('rejects requests the real API rejects', async () => {
    const noKey = await post(`${fake.url}/v1/messages`, request, { 'anthropic-version': '2023-06-01' });
    assert.equal(noKey.status, 401);
    assert.equal(noKey.json.error.type, 'authentication_error');
    const { max_tokens: _, ...withoutMax } = request;
    const noMax = await post(`${fake.url}/v1/messages`, withoutMax, headers);
    assert.equal(noMax.status, 400);
    assert.equal(noMax.json.type, 'error');
  });

  test('replies as the handler says', async () => {
    fake.respond((_body, n) => (n % 2 === 0 ? anthropicError(529, 'overloaded_error', 'busy') : undefined));
    const first = await post(`${fake.url}/v1/messages`, request, headers);
    assert.equal(first.status, 529);
    assert.deepEqual(first.json, { type: 'error', error: { type: 'overloaded_error', message: 'busy' } });
    fake.respond();
  });
});
