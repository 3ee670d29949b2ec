import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceAnalysis } from './source-analysis.js';

/**
 * Counts the reads behind an analysis of the names a file declares (read without the compiler:
 * what is tested is the keeping, and loading TypeScript would cost this file ~0.3 s).
 */
function declaredNames(name: string) {
  let parses = 0;
  const analyse = sourceAnalysis<string[]>(name, [import.meta.url], { onDisk: false });
  const names = (path: string, text: string) =>
    analyse(path, text, () => {
      parses++;
      return [...text.matchAll(/\bconst (\w+)/g)].map((m) => m[1]!);
    });
  return { names, parses: () => parses };
}

test('a text is parsed once; another text, or the same text at another path, is parsed again', () => {
  const a = declaredNames('once');
  assert.deepEqual(a.names('x.ts', 'const one = 1;'), ['one']);
  assert.deepEqual(a.names('x.ts', 'const one = 1;'), ['one']);
  assert.equal(a.parses(), 1);
  assert.deepEqual(a.names('x.ts', 'const two = 2;'), ['two']);
  assert.deepEqual(a.names('y.ts', 'const two = 2;'), ['two']);
  assert.equal(a.parses(), 3);
});

test('each call gets its own copy of a result: changing one changes no other', () => {
  const a = declaredNames('copies');
  a.names('x.ts', 'const one = 1;').push('changed');
  assert.deepEqual(a.names('x.ts', 'const one = 1;'), ['one']);
});

test('MNEMO_TEST_SOURCE_CACHE=0 parses every time', () => {
  process.env.MNEMO_TEST_SOURCE_CACHE = '0';
  try {
    const a = declaredNames('off');
    a.names('x.ts', 'const one = 1;');
    a.names('x.ts', 'const one = 1;');
    assert.equal(a.parses(), 2);
  } finally {
    delete process.env.MNEMO_TEST_SOURCE_CACHE;
  }
});
