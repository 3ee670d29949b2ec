import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import type { Db } from '../../src/store/db.js';
import { openPglite } from '../../src/store/pglite.js';
import { migratedTemplate } from '../helpers/engines.js';

test('the embedded page cache is 256 MB unless configured, and a bad size names its variable', () => {
  assert.equal(loadConfig({}, {}).embeddedCacheMb, 256);
  assert.equal(loadConfig({}, { MNEMO_EMBEDDED_CACHE_MB: '64' }).embeddedCacheMb, 64);
  for (const bad of ['8', '4096', 'lots'])
    assert.throws(() => loadConfig({}, { MNEMO_EMBEDDED_CACHE_MB: bad }), /MNEMO_EMBEDDED_CACHE_MB/);
});

// Started from the tests' migrated template: what is checked is the engine's start, not initdb.
// One engine for both tests (a start costs ~0.5 s of CPU): the first only reads settings.
describe('an embedded engine started with a 48 MB page cache', () => {
  let db: Db;
  before(async () => {
    db = await openPglite(undefined, { cacheMb: 48, template: await migratedTemplate() });
  });
  after(() => db.close());

  test('the embedded engine starts with the page cache it is given', async () => {
    assert.deepEqual(await db.query('SHOW shared_buffers'), [{ shared_buffers: '48MB' }]);
    // The engine's own settings still apply beside it.
    assert.deepEqual(await db.query('SHOW search_path'), [{ search_path: 'public' }]);
  });

  test('the embedded engine reports its memory: the cache reserved in its heap, and the part holding data', async () => {
    const before = await db.engineMemory!();
    assert.equal(before.cacheBytes, 48 * 2 ** 20);
    assert.ok(before.heapBytes > before.cacheBytes, `heap ${before.heapBytes} holds the cache`);
    assert.ok(before.cacheUsedBytes > 0, 'the catalog is cached from the start');
    // ~9 MB of rows (under a quarter of the cache, so a scan keeps them all), read twice.
    await db.exec(`CREATE TABLE filler AS SELECT g, repeat('x', 400) AS s FROM generate_series(1, 20000) g`);
    await db.query('SELECT count(*) FROM filler');
    await db.query('SELECT count(*) FROM filler');
    const after = await db.engineMemory!();
    assert.ok(
      after.cacheUsedBytes >= before.cacheUsedBytes + 6 * 2 ** 20,
      `cache in use grew from ${before.cacheUsedBytes} to ${after.cacheUsedBytes}`,
    );
    assert.ok(after.cacheUsedBytes <= after.cacheBytes, 'never more than the cache');
    assert.equal(after.heapBytes, before.heapBytes, 'the cache was reserved at start: the heap did not grow');
  });
});
