import assert from 'node:assert/strict';
import { test } from 'node:test';
import { costliestFirstByTable, costsFromCpuLog } from './costs.js';

test('the whole suite’s order: costliest first by the table, unknown slow files first, unknown fast files last', () => {
  const files = [
    'src/a.test.ts',
    'test/b.slow.test.ts',
    'test/c.test.ts',
    'test/stress/d.test.ts',
    'test/e.test.ts',
    'test/f.slow.test.ts',
  ];
  const costs = { 'src/a.test.ts': 5, 'test/b.slow.test.ts': 90, 'test/c.test.ts': 40 };
  assert.deepEqual(costliestFirstByTable(files, costs), [
    'test/stress/d.test.ts',
    'test/f.slow.test.ts',
    'test/b.slow.test.ts',
    'test/c.test.ts',
    'src/a.test.ts',
    'test/e.test.ts',
  ]);
});

test('the table from a CPU log: seconds per file from the root (wall, else CPU), the longest of several runs, no worker processes', () => {
  const log = [
    { kind: 'cpu', file: '/ci/test/b.slow.test.ts', ms: 30_000, wallMs: 61_400 },
    { kind: 'cpu', file: '/ci/src/a.test.ts', ms: 2_100 },
    { kind: 'cpu', file: '/ci/test/b.slow.test.ts', ms: 20_000, wallMs: 40_000 },
    { kind: 'cpu-file', file: '/ci/test/c.test.ts', ms: 9_000 },
    { kind: 'cpu', file: '/tmp/run/mnemo-test-worker-1.mjs', ms: 9_000, wallMs: 9_000 },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
  assert.deepEqual(costsFromCpuLog(`${log}\n`, '/ci'), {
    'src/a.test.ts': 2,
    'test/b.slow.test.ts': 61,
    'test/c.test.ts': 9,
  });
});
