/**
 * Each core module declares the store it needs: a function takes `Deps<S, K>` (or `Pick<Services, K>`)
 * from src/core/services.ts, never the whole `Services`, and names no `Store` (the composition of
 * every concern), so the compiler keeps it to the concerns it declares and a reader sees them in
 * its signature (docs/development.md, Layout and rules). Read with the TypeScript parser: a
 * comment or a string that names `Services` is not a declaration.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import type ts from 'typescript';
import { sourceAnalysis, typescript } from '../helpers/source-analysis.js';
import { ROOT, sourceFiles } from './import-graph.js';

/** Core files that may hold the whole store, and why. */
const WHOLE_STORE: { files: RegExp; why: string }[] = [
  { files: /^src\/core\/services\.ts$/, why: 'declares Services and Deps' },
  {
    files: /^src\/core\/crypto\/(encrypting-store|webhook-sealing)\.ts$/,
    why: 'the encryption layer wraps the whole Store: every concern that holds bank data passes through it',
  },
];

const STORE_MODULE = 'src/store/store.ts';

/** Declarations whose type is what a function, field or variable holds (not a type argument). */
const holders = (ts: typeof import('typescript')) =>
  new Set([
    ts.SyntaxKind.Parameter,
    ts.SyntaxKind.PropertyDeclaration,
    ts.SyntaxKind.PropertySignature,
    ts.SyntaxKind.VariableDeclaration,
    ts.SyntaxKind.FunctionDeclaration,
    ts.SyntaxKind.ArrowFunction,
    ts.SyntaxKind.MethodDeclaration,
    ts.SyntaxKind.FunctionType,
  ]);

/** What in `source` (the file at repository path `path`) takes more of the store than it declares. */
export function offences(path: string, source: string): string[] {
  return analyse(path, source, () => read(typescript(), path, source));
}

/** Read once per text of a file (test/helpers/source-analysis.ts). */
const analyse = sourceAnalysis<string[]>('narrow-store', [import.meta.url]);

function read(ts: typeof import('typescript'), path: string, source: string): string[] {
  const HOLDERS = holders(ts);
  const sf = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node) => `${path}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
  const visit = (n: ts.Node) => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      const to = relative(ROOT, resolve(ROOT, dirname(path), n.moduleSpecifier.text)).replace(/\.js$/, '.ts');
      const bindings = n.importClause?.namedBindings;
      if (to === STORE_MODULE && bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) {
          if ((el.propertyName ?? el.name).text === 'Store')
            out.push(`${at(el)} imports Store: take the narrow interfaces the module uses`);
        }
      }
    }
    if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName) && HOLDERS.has(n.parent.kind)) {
      const name = n.typeName.text;
      if (name === 'Services' && !n.typeArguments)
        out.push(`${at(n)} takes the whole Services: declare Deps<Store concerns, other services>`);
      if (name === 'OperationRunner' && !n.typeArguments)
        out.push(`${at(n)} is an OperationRunner of the whole Services: declare OperationRunner<Deps<…>>`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const coreFiles = sourceFiles(['src/core']).filter((f) => !WHOLE_STORE.some((w) => w.files.test(f)));

test('core modules declare the store they need (no whole Services, no Store)', () => {
  assert.ok(coreFiles.length > 50, `only ${coreFiles.length} core files found`);
  const found = coreFiles.flatMap((f) => offences(f, readFileSync(join(ROOT, f), 'utf8')));
  assert.deepEqual(found, [], `core taking the whole store:\n${found.join('\n')}`);
});

test('the check catches what it is for: a whole Services, a bare runner, an imported Store', () => {
  const planted = [
    "import type { BankStore, Store as All } from '../store/store.js';",
    "import type { Deps, Services } from './services.js';",
    '// a comment naming s: Services is no declaration',
    'export async function a(s: Services, id: string) {}',
    "export async function b(s: Deps<BankStore, 'now'>, t: Pick<Services, 'llm'>) {}",
    'export const run: OperationRunner = async (s, op) => ({});',
    'export const ok: OperationRunner<Deps<BankStore>> = async (s, op) => ({});',
    'class L { constructor(private readonly s: Services) {} }',
    'export function c<D = Services>(s: D): Services { return s; }',
  ].join('\n');
  assert.deepEqual(offences('src/core/planted.ts', planted), [
    'src/core/planted.ts:1 imports Store: take the narrow interfaces the module uses',
    'src/core/planted.ts:4 takes the whole Services: declare Deps<Store concerns, other services>',
    'src/core/planted.ts:6 is an OperationRunner of the whole Services: declare OperationRunner<Deps<…>>',
    'src/core/planted.ts:8 takes the whole Services: declare Deps<Store concerns, other services>',
    'src/core/planted.ts:9 takes the whole Services: declare Deps<Store concerns, other services>',
  ]);
});
