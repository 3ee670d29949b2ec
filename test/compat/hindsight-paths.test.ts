/**
 * Every request Hindsight's published client can make (test/compat/hindsight-paths.json) is
 * either served by mnemo — described in its /openapi.json, on `/v1/default` and `/v1/me` — or
 * listed in docs/compat.md with the reason it is not; and docs/compat.md says which is which.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_STATUS } from '../../src/core/errors.js';
import { type TestApp, testApp } from '../helpers/app.js';

const root = join(import.meta.dirname, '..', '..');
const data = JSON.parse(readFileSync(join(import.meta.dirname, 'hindsight-paths.json'), 'utf8')) as {
  pairs: string[];
};
const compat = readFileSync(join(root, 'docs', 'compat.md'), 'utf8');

const STATUSES = ['served', 'served with differences', 'not yet', 'planned', 'excluded'] as const;
type Status = (typeof STATUSES)[number];
const SERVED: readonly Status[] = ['served', 'served with differences'];

/** Parameter names differ (`{bank_id}` vs `{bank}`); a path is compared by its shape. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/:\w+/g, '{}');
const key = (method: string, path: string) => `${method.toUpperCase()} ${shape(path)}`;

/** The rows of docs/compat.md's tables: `| METHOD | \`path\` | status | notes |`. */
function compatRows(): { method: string; path: string; status: string; notes: string }[] {
  const rows = [];
  for (const line of compat.split('\n')) {
    const m = /^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| ([^|]*?) \| (.*?) ?\|$/.exec(line);
    if (m) rows.push({ method: m[1]!, path: m[2]!, status: m[3]!.trim(), notes: m[4]!.trim() });
  }
  return rows;
}

/** Where the pairs came from: the installed client's generated SDK. */
function clientPairs(): string[] {
  const sdk = readFileSync(
    join(root, 'node_modules', '@vectorize-io', 'hindsight-client', 'generated', 'sdk.gen.ts'),
    'utf8',
  );
  const out: string[] = [];
  for (const m of sdk.matchAll(/\)\.(get|post|put|patch|delete)<[\s\S]*?url: "([^"]+)"/g))
    out.push(`${m[1]!.toUpperCase()} ${m[2]}`);
  return out;
}

test('the copied path list is the installed Hindsight client’s', () => {
  const pairs = clientPairs();
  assert.equal(pairs.length, 89);
  assert.deepEqual([...pairs].sort(), [...data.pairs].sort(), 'update test/compat/hindsight-paths.json');
});

test('docs/compat.md has exactly one row, with a known status, for every Hindsight path', () => {
  const rows = compatRows();
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(`${r.method} ${r.path}`, (counts.get(`${r.method} ${r.path}`) ?? 0) + 1);
  const missing = data.pairs.filter((p) => !counts.has(p));
  const doubled = [...counts].filter(([, n]) => n > 1).map(([p]) => p);
  const unknown = rows.filter((r) => !data.pairs.includes(`${r.method} ${r.path}`));
  assert.deepEqual(missing, [], 'Hindsight paths without a row in docs/compat.md');
  assert.deepEqual(doubled, [], 'paths listed twice');
  assert.deepEqual(unknown, [], 'rows for paths Hindsight does not have');
  const bad = rows.filter((r) => !STATUSES.includes(r.status as Status));
  assert.deepEqual(bad, [], `status must be one of: ${STATUSES.join(', ')}`);
  const needsReason: readonly string[] = ['served with differences', 'planned', 'excluded'];
  const unexplained = rows.filter((r) => needsReason.includes(r.status) && r.notes === '');
  assert.deepEqual(unexplained, [], 'a path not served as Hindsight serves it says why');
});

test('the summary line of docs/compat.md counts its rows', () => {
  const rows = compatRows();
  const n = (status: Status) => rows.filter((r) => r.status === status).length;
  const served = n('served') + n('served with differences');
  // Statuses no row has are left out of the line.
  const rest = (['not yet', 'planned', 'excluded'] as const)
    .filter((s) => n(s) > 0)
    .map((s) => `, ${n(s)} ${s}`)
    .join('');
  const line =
    `Today: **${served} of ${rows.length} served** (${n('served')} served, ` +
    `${n('served with differences')} served with differences)${rest}.`;
  // However the paragraph is wrapped.
  assert.ok(compat.replace(/\s+/g, ' ').includes(line), `docs/compat.md should say:\n${line}`);
});

test('no error code answers 501: a route is served or absent', () => {
  assert.ok(!Object.values(ERROR_STATUS).includes(501 as never));
});

describe('docs/compat.md matches what mnemo serves', () => {
  let t: TestApp;
  /** `METHOD shape` of every operation /openapi.json describes. */
  const described = new Set<string>();
  before(async () => {
    t = await testApp('pglite');
    const doc = (await t.call('GET', '/openapi.json')).body as { paths: Record<string, object> };
    for (const [path, ops] of Object.entries(doc.paths))
      for (const method of Object.keys(ops)) described.add(key(method, path));
  });
  after(() => t.close());

  /** The same path on the project-key surface. */
  const mePath = (path: string) => path.replace(/^\/v1\/default\//, '/v1/me/');

  test('a path marked served is described in /openapi.json, on /v1/default and /v1/me', () => {
    const absent: string[] = [];
    for (const r of compatRows().filter((r) => SERVED.includes(r.status as Status))) {
      if (!described.has(key(r.method, r.path))) absent.push(`${r.method} ${r.path}`);
      if (r.path.startsWith('/v1/default/') && !described.has(key(r.method, mePath(r.path))))
        absent.push(`${r.method} ${mePath(r.path)}`);
    }
    assert.deepEqual(absent, []);
  });

  test('a path marked not served is not served (the page is not stale)', () => {
    const served = compatRows()
      .filter((r) => !SERVED.includes(r.status as Status))
      .filter((r) => described.has(key(r.method, r.path)))
      .map((r) => `${r.method} ${r.path}: ${r.status}`);
    assert.deepEqual(served, [], 'mark these served in docs/compat.md');
  });

  test('every route the app serves is described in /openapi.json', () => {
    // Not API operations: the reference itself, its viewer, the console page, and the MCP
    // endpoint (JSON-RPC; its tools are listed in docs/mcp.md).
    const outside = /^\/(openapi\.json|docs|console|mcp)(\/|$)/;
    const undescribed = [
      ...new Set(
        t.app.routes
          .filter((r) => r.method !== 'ALL' && !outside.test(r.path))
          .map((r) => key(r.method, r.path.replace(/\/$/, '') || '/'))
          .filter((k) => !described.has(k)),
      ),
    ];
    assert.deepEqual(undescribed, []);
  });
});
