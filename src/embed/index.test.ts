import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEmbedder, LOCAL_EMBEDDER_ID } from './index.js';

test('local unless an embeddings URL is configured', () => {
  assert.equal(createEmbedder({ cacheDir: '/nonexistent' }).id, LOCAL_EMBEDDER_ID);
  const remote = createEmbedder({
    cacheDir: '/nonexistent',
    embeddingsUrl: 'http://127.0.0.1:9/v1',
    embeddingsModel: 'text-embedding-3-small',
    embeddingsDimensions: 512,
  });
  assert.equal(remote.id, 'openai:text-embedding-3-small:512');
  assert.equal(remote.dimensions, 512);
  assert.throws(
    () => createEmbedder({ cacheDir: '/x', embeddingsUrl: 'http://127.0.0.1:9' }),
    /embeddingsModel is required/,
  );
});
