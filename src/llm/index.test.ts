import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLanguageModel, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL } from './index.js';

describe('createLanguageModel', () => {
  test("provider 'none' means no model", () => {
    assert.equal(createLanguageModel({ provider: 'none' }), null);
  });

  test('hosted providers get a default model', () => {
    const openai = createLanguageModel({ provider: 'openai', apiKey: 'k' });
    assert.equal(openai?.provider, 'openai');
    assert.equal(openai?.model, DEFAULT_OPENAI_MODEL);
    const anthropic = createLanguageModel({ provider: 'anthropic', apiKey: 'k' });
    assert.equal(anthropic?.provider, 'anthropic');
    assert.equal(anthropic?.model, DEFAULT_ANTHROPIC_MODEL);
  });

  test('a self-hosted OpenAI-compatible server needs a model name but no key', () => {
    assert.throws(
      () => createLanguageModel({ provider: 'openai', baseUrl: 'http://localhost:11434/v1' }),
      /needs a model name: set "model"/,
    );
    const local = createLanguageModel({
      provider: 'openai',
      baseUrl: 'http://localhost:11434/v1',
      model: 'qwen3',
    });
    assert.equal(local?.model, 'qwen3');
  });

  test('hosted APIs need a key', () => {
    assert.throws(() => createLanguageModel({ provider: 'openai' }), /needs an API key: set "apiKey"/);
    assert.throws(() => createLanguageModel({ provider: 'anthropic' }), /needs an API key: set "apiKey"/);
  });
});
