import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ACTIONS } from '../contract/actions.js';
import { BANK_CONFIG_SCHEMA } from '../contract/bank-config.js';
import { BudgetSchema, TagsMatchSchema } from '../contract/common.js';
import { EVALUATION_CHANNELS } from '../contract/evaluations.js';
import { FACT_TYPES, SCOPES } from '../contract/vocabulary.js';
import { consoleRoutes } from './routes.js';
import { CONSOLE_VOCABULARY } from './vocabulary.js';

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));

function assetFiles(dir = ASSETS, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) assetFiles(path, out);
    else if (entry.name.endsWith('.js')) out.push(path);
  }
  return out.sort();
}

async function servedVocabulary(): Promise<Record<string, readonly string[]>> {
  const res = await consoleRoutes.request('/assets/vocabulary.js');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const source = await res.text();
  return import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);
}

test('the console is served the contract’s words as an ES module', async () => {
  const served = await servedVocabulary();
  assert.deepEqual(Object.keys(served).sort(), Object.keys(CONSOLE_VOCABULARY).sort());
  for (const [name, words] of Object.entries(CONSOLE_VOCABULARY))
    assert.deepEqual([...served[name]!], [...words], name);
  // What the contract says, not a copy of it.
  assert.deepEqual([...served.FACT_TYPES!], [...FACT_TYPES]);
  assert.deepEqual([...served.SCOPES!], [...SCOPES]);
  assert.deepEqual([...served.TAGS_MATCH!], TagsMatchSchema.options);
  assert.deepEqual([...served.BUDGETS!], BudgetSchema.options);
  assert.deepEqual([...served.EVALUATION_CHANNELS!], [...EVALUATION_CHANNELS]);
  assert.deepEqual([...served.CONFIG_KEYS!], Object.keys(BANK_CONFIG_SCHEMA.shape));
  assert.ok(served.AUDITED_ACTIONS!.includes('memories.retain'));
  assert.ok(
    served.AUDITED_ACTIONS!.every((a) => a in ACTIONS && !ACTIONS[a as keyof typeof ACTIONS].read),
    'only actions that write are audited',
  );
  assert.ok(Object.isFrozen(served.SCOPES), 'the page cannot change the lists');
});

test('every name an asset imports from vocabulary.js is served', async () => {
  const served = await servedVocabulary();
  let imports = 0;
  for (const file of assetFiles()) {
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'[./]*\/?vocabulary\.js'/g)) {
      for (const name of m[1]!
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)) {
        imports++;
        assert.ok(
          name in served,
          `${relative(ASSETS, file)} imports ${name}, which vocabulary.js does not export`,
        );
      }
    }
  }
  assert.ok(imports >= 10, `the views take their lists from vocabulary.js (${imports} names imported)`);
});

test('the console’s labels are keyed by exactly the contract’s words', async () => {
  // A browser module without types: its exports are label maps.
  const labels: Record<string, Record<string, unknown>> = await import(
    new URL('./assets/labels.js', import.meta.url).href
  );
  const keyed: [string, Record<string, unknown> | undefined, readonly string[]][] = [
    ['SCOPE_LABELS', labels.SCOPE_LABELS, CONSOLE_VOCABULARY.SCOPES],
    ['TAGS_MATCH_LABELS', labels.TAGS_MATCH_LABELS, CONSOLE_VOCABULARY.TAGS_MATCH],
    ['OPERATION_STATUS_KINDS', labels.OPERATION_STATUS_KINDS, CONSOLE_VOCABULARY.OPERATION_STATUSES],
    ['DISPOSITION_LABELS', labels.DISPOSITION_LABELS, CONSOLE_VOCABULARY.DISPOSITION_TRAITS],
    ['CONFIG_HINTS', labels.CONFIG_HINTS, CONSOLE_VOCABULARY.CONFIG_KEYS],
  ];
  for (const [name, map, words] of keyed) {
    assert.ok(map, `labels.js exports ${name}`);
    const keys = Object.keys(map);
    const missing = words.filter((w) => !keys.includes(w));
    const unknown = keys.filter((k) => !words.includes(k));
    assert.deepEqual(missing, [], `${name} has no label for the contract's ${missing.join(', ')}`);
    assert.deepEqual(unknown, [], `${name} labels ${unknown.join(', ')}, which the contract does not have`);
  }
});

test('no console asset lists the contract’s words itself', () => {
  // A file quoting several words of one list restates it; one or two are a particular case
  // (the scopes a new key starts with, the score shown first).
  const offences: string[] = [];
  for (const file of assetFiles()) {
    if (file.endsWith('labels.js')) continue; // keyed by the words, checked above
    const source = readFileSync(file, 'utf8');
    const quoted = new Set([...source.matchAll(/(['"`])([\w:.-]+)\1/g)].map((m) => m[2]!));
    for (const [name, words] of Object.entries(CONSOLE_VOCABULARY)) {
      const found = words.filter((w) => quoted.has(w));
      if (found.length >= Math.min(3, words.length))
        offences.push(`${relative(ASSETS, file)} quotes ${name}: ${found.join(', ')}`);
    }
  }
  assert.deepEqual(offences, [], 'import these from vocabulary.js instead');
});
