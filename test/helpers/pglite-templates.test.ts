/**
 * The embedded test databases' template (pglite-templates.ts): PGlite is handed the tarball's
 * own bytes at every database opened from it, so opening one must leave them as they were, and
 * a test database starts with the small page cache.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { openPglite } from '../../src/store/pglite.js';
import { migratedTemplate, openTestDb } from './engines.js';
import { TEST_CACHE_MB, TemplateTarball } from './pglite-templates.js';

const digest = async (blob: Blob) =>
  createHash('sha256')
    .update(new Uint8Array(await blob.arrayBuffer()))
    .digest('hex');

test('opening a database from the template leaves its bytes as they were', async () => {
  const template = await migratedTemplate();
  assert.ok(template instanceof TemplateTarball);
  const before = await digest(template);
  // What Blob's own reading gives: the same bytes as the shortcut.
  assert.equal(
    createHash('sha256')
      .update(new Uint8Array(await new Response(template.stream()).arrayBuffer()))
      .digest('hex'),
    before,
  );
  const db = await openPglite(undefined, { template, cacheMb: TEST_CACHE_MB });
  try {
    await db.exec('CREATE TABLE scribble (n int); INSERT INTO scribble SELECT generate_series(1, 1000)');
  } finally {
    await db.close();
  }
  assert.equal(await digest(template), before);
});

test('a window on a larger buffer is read as the window only', async () => {
  const larger = new Uint8Array([9, 1, 2, 3, 9]);
  const tarball = new TemplateTarball(larger.subarray(1, 4));
  assert.deepEqual([...new Uint8Array(await tarball.arrayBuffer())], [1, 2, 3]);
  larger[2] = 7;
  assert.deepEqual([...new Uint8Array(await tarball.arrayBuffer())], [1, 2, 3], 'its own copy');
});

test(`a test database has a ${TEST_CACHE_MB} MB page cache`, async () => {
  const { db, dispose } = await openTestDb('pglite');
  try {
    assert.deepEqual(await db.query('SHOW shared_buffers'), [{ shared_buffers: `${TEST_CACHE_MB}MB` }]);
  } finally {
    await dispose();
  }
});
