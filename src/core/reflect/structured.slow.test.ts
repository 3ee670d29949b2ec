/**
 * Compiling a client's response_schema must not keep it: ajv holds every schema an instance
 * compiled, so one shared instance grew by each Reflect's schema for the life of the process
 * (3,000 schemas of 4 KB: ~16 MB kept). Measured on the heap after a forced collection.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { compileResponseSchema } from './structured.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

test('compiled response schemas are not kept: the heap does not grow with their number', () => {
  const schema = (i: number) => ({
    type: 'object',
    properties: { [`field${i}`]: { type: 'string', description: `${i} ${'d'.repeat(4000)}` } },
  });
  for (let i = 0; i < 200; i++) compileResponseSchema(schema(i));
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 3000; i++) assert.equal(compileResponseSchema(schema(i))({ [`field${i}`]: 'x' }), true);
  gc();
  const grown = (process.memoryUsage().heapUsed - before) / 1e6;
  assert.ok(grown < 5, `heap grew ${grown.toFixed(1)} MB over 3,000 compiles`);
});
