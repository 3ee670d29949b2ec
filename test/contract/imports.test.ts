/**
 * What may import what: no import cycles anywhere in the sources, and each folder of `src/`
 * imports only the layers below it (the table `LAYERS`, drawn in docs/development.md, which a
 * test here keeps equal to it). Failures name the cycle or the offending import with its line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cycles, type Edge, importsOf, ROOT, sourceFiles } from './import-graph.js';

/** What the API is built from: everything below the entry points. */
const SERVICES = [
  'contract',
  'text',
  'config',
  'net',
  'embed',
  'llm',
  'store',
  'core',
  'jobs',
  'mcp',
  'console',
];

/**
 * Each folder of `src/` (and the SDK, `client`) with the folders it may import besides its own.
 * Bottom first: the contract and the pure helpers, then the store, core, and the entry points.
 */
export const LAYERS: Record<string, readonly string[]> = {
  contract: [],
  net: [],
  text: ['contract'],
  config: ['net'],
  embed: ['net'],
  llm: ['net'],
  store: ['contract'],
  core: ['contract', 'text', 'store', 'embed', 'llm'],
  jobs: ['contract', 'core', 'store'],
  // MCP's HTTP endpoint is a route of the API, and its tools reuse the API's error mapping.
  mcp: ['contract', 'core', 'text', 'api'],
  // The console serves the contract's words to its pages (vocabulary.ts).
  console: ['contract', 'api'],
  api: SERVICES,
  runtime: [...SERVICES, 'api'],
  client: ['contract'],
  cli: [...SERVICES, 'api', 'runtime', 'client'],
};

/**
 * Parts of a folder only some layers may reach: the store's SQL, engines and migrations are
 * its own business (core sees the `Store` interfaces and records); opening and migrating a
 * database is for the entry points.
 */
const RESERVED: { files: RegExp; what: string; from: readonly string[] }[] = [
  {
    files: /^src\/store\/(sql\/|pglite|postgres|db\.ts)/,
    what: "the store's SQL and engines",
    from: ['store'],
  },
  {
    files: /^src\/store\/(open\.ts|migrate\.ts|migrations\/)/,
    what: 'opening and migrating a database',
    from: ['store', 'api', 'runtime', 'cli'],
  },
];

/** Packages a layer may import (`node:` built-ins always). Absent: any declared dependency. */
const PACKAGES: Record<string, RegExp> = {
  contract: /^zod$/,
  client: /^zod$/,
  // Text from files: HTML entities decoded (entities), PDF text read (pdfjs-dist), archives (fflate).
  text: /^(chrono-node|compromise|diff|entities|fflate|gpt-tokenizer|pdfjs-dist)(\/|$)/,
  store: /^(@electric-sql\/|pg$)/,
  // Core knows nothing of HTTP, SQL drivers, MCP, logging or the command line.
  core: /^(zod|ajv)(\/|$)/,
};

const DIRS = ['src', 'packages/client/src'];
const edges = sourceFiles(DIRS).flatMap(importsOf);

/** The layer of a file of the repository (`(outside)` for one outside the layered folders). */
function layerOf(path: string): string {
  if (path.startsWith('packages/client/src/')) return 'client';
  return /^src\/([^/]+)\//.exec(path)?.[1] ?? '(outside)';
}

const show = (e: Edge) => `${e.from}:${e.line} imports ${e.to}${e.kind === 'value' ? '' : ` (${e.kind})`}`;

/** The layer rules broken by `list`, one line each. */
export function violations(list: Edge[]): string[] {
  const out: string[] = [];
  for (const e of list) {
    const from = layerOf(e.from);
    const allowed = LAYERS[from];
    if (!allowed) {
      out.push(`${e.from}: folder '${from}' has no place in LAYERS (test/contract/imports.test.ts)`);
      continue;
    }
    if (!e.local) {
      const pattern = PACKAGES[from];
      if (pattern && !e.to.startsWith('node:') && !pattern.test(e.to)) {
        out.push(`${show(e)}: ${from} may import only ${pattern.source} of the packages`);
      }
      continue;
    }
    const to = layerOf(e.to);
    if (to !== from && !allowed.includes(to)) {
      out.push(`${show(e)}: ${from} may import only ${allowed.join(', ') || 'its own files'}`);
      continue;
    }
    for (const r of RESERVED) {
      if (r.files.test(e.to) && !r.from.includes(from))
        out.push(`${show(e)}: ${r.what} are for ${r.from.join(', ')}`);
    }
  }
  return out;
}

test('the sources were found and parsed (the checks below see real imports)', () => {
  assert.ok(edges.length > 500, `only ${edges.length} imports found`);
  const known = edges.find((e) => e.from === 'src/core/services.ts' && e.to === 'src/store/store.ts');
  assert.equal(known?.kind, 'type');
});

test('no import cycles (static imports, types included)', () => {
  const found = cycles(edges, ['value', 'type']).map((c) => c.join(' → '));
  assert.deepEqual(found, [], `import cycles:\n${found.join('\n')}`);
});

test('each folder imports only the layers it may (LAYERS)', () => {
  const found = violations(edges);
  assert.deepEqual(found, [], `layer rules broken:\n${found.join('\n')}`);
});

test('the checks catch what they are for: a planted cycle, store importing core, core importing SQL', () => {
  const planted: Edge[] = [
    { from: 'src/core/banks.ts', to: 'src/core/recall/recall.ts', kind: 'type', line: 1, local: true },
    { from: 'src/core/recall/recall.ts', to: 'src/core/banks.ts', kind: 'value', line: 4, local: true },
  ];
  assert.deepEqual(
    cycles(planted, ['value', 'type']).map((c) => c.join(' → ')),
    ['src/core/banks.ts → src/core/recall/recall.ts → src/core/banks.ts'],
  );
  assert.deepEqual(cycles(planted, ['value']), []);
  assert.deepEqual(
    violations([
      { from: 'src/store/sql/banks.ts', to: 'src/core/errors.ts', kind: 'value', line: 2, local: true },
      { from: 'src/core/banks.ts', to: 'src/store/sql/banks.ts', kind: 'type', line: 3, local: true },
      { from: 'src/core/banks.ts', to: 'hono', kind: 'value', line: 5, local: false },
      { from: 'src/contract/banks.ts', to: 'src/api/errors.ts', kind: 'lazy', line: 9, local: true },
    ]),
    [
      'src/store/sql/banks.ts:2 imports src/core/errors.ts: store may import only contract',
      "src/core/banks.ts:3 imports src/store/sql/banks.ts (type): the store's SQL and engines are for store",
      'src/core/banks.ts:5 imports hono: core may import only ^(zod|ajv)(\\/|$) of the packages',
      'src/contract/banks.ts:9 imports src/api/errors.ts (lazy): contract may import only its own files',
    ],
  );
});

test('docs/development.md draws the same layers', () => {
  const doc = readFileSync(join(ROOT, 'docs/development.md'), 'utf8');
  const drawn: Record<string, string[]> = {};
  for (const m of doc.matchAll(/^\| `(\w+)` \|([^|]*)\|/gm)) {
    drawn[m[1]!] = [...m[2]!.matchAll(/`(\w+)`/g)].map((x) => x[1]!).sort();
  }
  const table = Object.fromEntries(Object.entries(LAYERS).map(([k, v]) => [k, [...v].sort()]));
  assert.deepEqual(drawn, table);
});
