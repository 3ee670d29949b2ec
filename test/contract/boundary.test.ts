/**
 * The contract (`src/contract`) is one layer with a strict boundary: it imports nothing but zod
 * and its own files (imports.test.ts), so the SDK can bundle it and every consumer shares one
 * definition. Its catalogue of actions matches what the routes and MCP tools declare.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ACTIONS, SCOPES } from '../../src/contract/index.js';
import { ADMIN_TOOLS, TOOLS } from '../../src/mcp/server.js';

const DIR = join(import.meta.dirname, '../../src/contract');
const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

// What the contract may import (zod and its own files) is one row of the layer table in
// imports.test.ts, which checks every folder the same way.
test('src/contract uses no Node globals (the SDK bundles it, for browsers too)', () => {
  const found: string[] = [];
  for (const file of files) {
    if (/\b(Buffer|process)\./.test(readFileSync(join(DIR, file), 'utf8'))) found.push(file);
  }
  assert.deepEqual(found, []);
});

test('every action names a known scope (or the operator); MCP tools perform known, non-operator actions', () => {
  for (const [name, spec] of Object.entries(ACTIONS)) {
    assert.ok(spec.scope === 'operator' || (SCOPES as readonly string[]).includes(spec.scope), name);
  }
  for (const tool of [...TOOLS, ...ADMIN_TOOLS]) {
    const spec = ACTIONS[tool.action as keyof typeof ACTIONS];
    assert.ok(spec, `${tool.name}: unknown action ${tool.action}`);
    assert.notEqual(spec.scope, 'operator', tool.name);
  }
});

test('every guarded route names an action of the catalogue', () => {
  const routes = join(import.meta.dirname, '../../src/api/routes');
  const named = new Set<string>();
  for (const file of readdirSync(routes)) {
    const text = readFileSync(join(routes, file), 'utf8');
    for (const m of text.matchAll(/\b(?:guard|op)\('([^']+)'\)/g)) named.add(m[1]!);
  }
  const unknown = [...named].filter((a) => !Object.hasOwn(ACTIONS, a));
  assert.deepEqual(unknown, []);
  // Each action of the catalogue is used by a route (a stale entry is a lie about the API).
  const unused = Object.keys(ACTIONS).filter((a) => !named.has(a));
  assert.deepEqual(unused, []);
});
