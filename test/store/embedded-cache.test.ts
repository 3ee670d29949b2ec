import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { openPglite } from '../../src/store/pglite.js';

test('the embedded page cache is 256 MB unless configured, and a bad size names its variable', () => {
  assert.equal(loadConfig({}, {}).embeddedCacheMb, 256);
  assert.equal(loadConfig({}, { MNEMO_EMBEDDED_CACHE_MB: '64' }).embeddedCacheMb, 64);
  for (const bad of ['8', '4096', 'lots'])
    assert.throws(() => loadConfig({}, { MNEMO_EMBEDDED_CACHE_MB: bad }), /MNEMO_EMBEDDED_CACHE_MB/);
});

test('the embedded engine starts with the page cache it is given', async () => {
  const db = await openPglite(undefined, { cacheMb: 48 });
  try {
    assert.deepEqual(await db.query('SHOW shared_buffers'), [{ shared_buffers: '48MB' }]);
    // The engine's own settings still apply beside it.
    assert.deepEqual(await db.query('SHOW search_path'), [{ search_path: 'public' }]);
  } finally {
    await db.close();
  }
});
