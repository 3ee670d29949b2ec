/**
 * The reference parts of the docs (error codes, scopes, CLI commands and flags, settings) are
 * written from the code by `npm run docs` into marked regions; this fails while any is stale.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REGIONS } from '../../scripts/docs/index.js';
import { routesByAction } from '../../scripts/docs/scopes.js';
import { ACTIONS } from '../../src/contract/actions.js';
import { fillRegion, renderAll, writeAll } from '../../scripts/docs/regions.js';

test('every generated region of the docs matches the code', () => {
  const stale = renderAll(REGIONS).flatMap((f) => f.stale.map((name) => `${f.file}: ${name}`));
  assert.deepEqual(stale, [], `stale generated docs (${stale.join(', ')}): run \`npm run docs\` and commit`);
});

test('the scope table finds a route for every action (every guarded router is in GUARDED_MOUNTS)', () => {
  const routes = routesByAction();
  const missing = Object.keys(ACTIONS).filter((a) => !routes.get(a as keyof typeof ACTIONS)?.length);
  assert.deepEqual(missing, [], 'mount new guarded routers through GUARDED_MOUNTS (src/api/routes/index.ts)');
});

test('a region that differs from its render is reported, and npm run docs rewrites only it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-docs-'));
  try {
    const doc = 'intro\n<!-- generated:a -->\nold\n<!-- /generated:a -->\nkept prose\n';
    writeFileSync(join(dir, 'x.md'), doc);
    const regions = [{ file: 'x.md', name: 'a', render: () => '| new |' }];
    assert.deepEqual(
      renderAll(regions, dir).map((f) => f.stale),
      [['a']],
    );
    assert.deepEqual(writeAll(regions, dir), ['x.md: a']);
    const after = readFileSync(join(dir, 'x.md'), 'utf8');
    assert.match(
      after,
      /^intro\n<!-- generated:a -->\n.*\n\n\| new \|\n\n<!-- \/generated:a -->\nkept prose\n$/,
    );
    assert.deepEqual(
      renderAll(regions, dir).map((f) => f.stale),
      [[]],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a region without its markers, or with two openings, is an error naming the file', () => {
  assert.throws(() => fillRegion('no markers', 'x.md', 'a', 'c'), /x\.md: needs one "<!-- generated:a -->"/);
  const twice = '<!-- generated:a -->\n<!-- /generated:a -->\n<!-- generated:a -->\n<!-- /generated:a -->';
  assert.throws(() => fillRegion(twice, 'x.md', 'a', 'c'), /needs one/);
});
