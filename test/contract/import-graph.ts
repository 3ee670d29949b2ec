/**
 * The import graph of the sources, read with the TypeScript parser (not a regex: a string or
 * comment that looks like an import is not one), kept by each file's text between runs
 * (test/helpers/source-analysis.ts). Used by the import-cycle and layer checks.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type TS from 'typescript';
import { sourceAnalysis, typescript } from '../helpers/source-analysis.js';

/** One import of a file. `kind`: `type` is erased at build time, `lazy` is a dynamic `import()`. */
export interface Edge {
  from: string;
  /** A repository-relative path for a relative import, else the package name as written. */
  to: string;
  kind: 'value' | 'type' | 'lazy';
  line: number;
  /** A file of this repository (a relative import), not a package. */
  local: boolean;
}

export const ROOT = resolve(import.meta.dirname, '../..');

/** Every `.ts` file under `dirs` (repository-relative), tests and declaration files left out. */
export function sourceFiles(dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts')) out.push(path);
    }
  };
  for (const dir of dirs) walk(dir);
  return out.sort();
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts` (NodeNext: the `.js` names the compiled `.ts`). */
function resolveSpecifier(from: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const base = relative(ROOT, resolve(ROOT, dirname(from), spec));
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}/index.ts`, base]) {
    if (existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile()) return candidate;
  }
  return base;
}

/** An import as written in a file: what the parse gives, before the specifier is resolved. */
type Written = Pick<Edge, 'kind' | 'line'> & { spec: string };

/** Parsed once per text of a file (test/helpers/source-analysis.ts). */
const analyse = sourceAnalysis<Written[]>('imports', [import.meta.url]);

/** The imports and re-exports of one file, static and dynamic. */
export function importsOf(file: string): Edge[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return analyse(file, text, () => writtenImports(typescript(), file, text)).map(({ spec, kind, line }) => ({
    from: file,
    to: resolveSpecifier(file, spec),
    kind,
    line,
    local: spec.startsWith('.'),
  }));
}

function writtenImports(ts: typeof TS, file: string, text: string): Written[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Written[] = [];
  const add = (spec: TS.Expression, kind: Edge['kind'], at: TS.Node) => {
    if (!ts.isStringLiteral(spec)) return;
    const line = source.getLineAndCharacterOfPosition(at.getStart(source)).line + 1;
    out.push({ spec: spec.text, kind, line });
  };
  /**
   * An import of named bindings that are all `type` still loads the module under
   * `verbatimModuleSyntax` (it becomes `import {} from`), so only `import type` counts as type.
   */
  const declarationKind = (node: TS.ImportDeclaration | TS.ExportDeclaration): Edge['kind'] => {
    if (ts.isImportDeclaration(node)) return node.importClause?.isTypeOnly ? 'type' : 'value';
    return node.isTypeOnly ? 'type' : 'value';
  };
  const visit = (node: TS.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      add(node.moduleSpecifier, declarationKind(node), node);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg) add(arg, 'lazy', node);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as TS.Expression, 'type', node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * The cycles among `kinds` of edges between the given files: each strongly connected component
 * of more than one file (or a file importing itself), named by one shortest cycle through it.
 */
export function cycles(edges: Edge[], kinds: Edge['kind'][]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!kinds.includes(e.kind)) continue;
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  // Tarjan's strongly connected components, iteratively (deep graphs would overflow the stack).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; children: string[] }[] = [];
    const enter = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: [...(next.get(node) ?? [])] });
    };
    enter(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const child = top.children.shift();
      if (child !== undefined) {
        if (!index.has(child)) enter(child);
        else if (onStack.has(child)) low.set(top.node, Math.min(low.get(top.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== top.node);
        if (component.length > 1 || next.get(top.node)?.has(top.node)) components.push(component);
      }
    }
  }
  return components.map((component) => shortestCycle(component.sort()[0]!, new Set(component), next));
}

/** A shortest path from `start` back to itself inside the component (breadth first). */
function shortestCycle(start: string, inside: Set<string>, next: Map<string, Set<string>>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const child of next.get(node) ?? []) {
      if (!inside.has(child)) continue;
      if (child === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return [...path, start];
      }
      if (!previous.has(child)) {
        previous.set(child, node);
        queue.push(child);
      }
    }
  }
  return [start, start];
}
