import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACTIONS, scopesAdmit, scopesNeeded } from './actions.js';

test('a key is admitted by the action scope or its orScope, never to an operator action', () => {
  const get = ACTIONS['operations.get'];
  assert.equal(scopesAdmit(get, new Set(['recall'] as const)), true);
  assert.equal(scopesAdmit(get, new Set(['retain'] as const)), true);
  assert.equal(scopesAdmit(get, new Set(['graph:read'] as const)), false);
  assert.equal(scopesAdmit(get, 'all'), true);
  assert.equal(scopesNeeded(get), "'retain' or 'recall'");
  const recall = ACTIONS['memories.recall'];
  assert.equal(scopesAdmit(recall, new Set(['retain'] as const)), false);
  assert.equal(scopesNeeded(recall), "'recall'");
  const operator = Object.values(ACTIONS).find((a) => a.scope === 'operator');
  assert.ok(operator, 'the catalogue has operator actions');
  assert.equal(scopesAdmit(operator, new Set(['admin', 'recall', 'retain'] as const)), false);
});
