/**
 * Type test, compiled by `tsc --noEmit` (`npm run check`) and never run: the SDK's methods are
 * typed from the contract's schemas, so a misspelt field of a request or a response is a compile
 * error. Each `@ts-expect-error` fails the build if the line below it ever compiles.
 */
import type { Mnemo } from '../src/index.js';

export async function typeChecks(mnemo: Mnemo): Promise<void> {
  const recalled = await mnemo.memories.recall('b', 'q');
  const n: number = recalled.usage.tokens_used;
  // @ts-expect-error a misspelt response field
  recalled.usage.token_used;
  // @ts-expect-error a field of an item of a response
  recalled.results[0]?.txt;
  // @ts-expect-error a misspelt request field
  await mnemo.memories.recall('b', { query: 'q', max_token: n });
  // @ts-expect-error a fact type outside the contract's enum
  await mnemo.memories.retain('b', { items: [{ content: 'x', fact_type: 'gossip' }] });
  const stored = await mnemo.memories.retain('b', { items: [{ content: 'x' }], async: true });
  // @ts-expect-error an async Retain answers with an operation, not memory ids
  stored.memory_ids;
  const op = await mnemo.operations.get('b', stored.operation_id);
  // @ts-expect-error a status outside the contract's enum
  if (op.status === 'done') return;
  const profile = await mnemo.banks.get('b');
  // @ts-expect-error a misspelt field of a bank profile
  profile.memory_cont;
  const key = await mnemo.projects.keys.create('p', { name: 'k', scopes: ['recall'] });
  // @ts-expect-error a scope outside the contract's list
  await mnemo.projects.keys.create('p', { name: 'k', scopes: ['write'] });
  void key.key;
  const run = await mnemo.evaluations.run('b', { k: 5, cases: [{ query: 'q', expected_memory_ids: ['m'] }] });
  // @ts-expect-error a misspelt figure
  run.recall_at_10;
  // @ts-expect-error a channel the contract does not have
  run.channels.lexical;
  // @ts-expect-error cases need their expected memories
  await mnemo.evaluations.run('b', { cases: [{ query: 'q' }] });
}
