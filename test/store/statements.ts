/**
 * The SQL statements of the store, read from its source with the TypeScript parser: every
 * `.query(...)` and `.exec(...)` call of `src/store/sql/*.ts`, with the method it belongs to.
 * A statement built from constants (`${COLUMNS}`) is read with them filled in; one held in a
 * variable is read in each form assigned to it; anything else is marked dynamic.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type TS from 'typescript';
import { sourceAnalysis, typescript } from '../helpers/source-analysis.js';

export interface Statement {
  /** `file:method`, e.g. `operations.ts:claimOperation`. */
  where: string;
  line: number;
  /** The SQL with constants filled in; other interpolations left as `${...}`. Null when dynamic. */
  sql: string | null;
}

const DIR = join(import.meta.dirname, '../../src/store/sql');

/** Every statement of the store's SQL files. */
export function storeStatements(): Statement[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .flatMap((f) => statementsOf(f, readFileSync(join(DIR, f), 'utf8')));
}

/** Read once per text of a file (test/helpers/source-analysis.ts). */
const analyse = sourceAnalysis<Statement[]>('store-statements', [import.meta.url]);

function statementsOf(file: string, text: string): Statement[] {
  return analyse(file, text, () => readStatements(typescript(), file, text));
}

function readStatements(ts: typeof TS, file: string, text: string): Statement[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  // Every string a name is given in the file (`const COLUMNS = '...'`, `sql = \`...\``).
  const assigned = new Map<string, TS.Expression[]>();
  const note = (name: string, value: TS.Expression) => {
    if (!assigned.has(name)) assigned.set(name, []);
    assigned.get(name)!.push(value);
  };
  const collect = (node: TS.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      note(node.name.text, node.initializer);
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isIdentifier(node.left)
    ) {
      note(node.left.text, node.right);
    }
    ts.forEachChild(node, collect);
  };
  collect(source);

  /** The texts an expression can have, or null when it is not built from literals and constants. */
  const texts = (e: TS.Expression, depth = 0): string[] | null => {
    if (depth > 5) return null;
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return [e.text];
    if (ts.isTemplateExpression(e)) {
      let out = e.head.text;
      for (const span of e.templateSpans) {
        const inner = ts.isIdentifier(span.expression) ? texts(span.expression, depth + 1) : null;
        out +=
          (inner?.length === 1 ? inner[0] : `\${${span.expression.getText(source)}}`) + span.literal.text;
      }
      return [out];
    }
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      // 'project_id = $1' + filterClauses(...): the literal part is read, the rest left as `${...}`.
      const part = (x: TS.Expression) => {
        const t = texts(x, depth + 1);
        return t?.length === 1 ? t[0]! : `\${${x.getText(source)}}`;
      };
      return [part(e.left) + part(e.right)];
    }
    if (ts.isIdentifier(e)) {
      const values = assigned.get(e.text) ?? [];
      const all = values.map((v) => texts(v, depth + 1));
      return all.length > 0 && all.every((t) => t !== null) ? all.flat() : null;
    }
    return null;
  };

  const out: Statement[] = [];
  const visit = (node: TS.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      (node.expression.name.text === 'query' || node.expression.name.text === 'exec') &&
      node.arguments[0]
    ) {
      let method = '(top level)';
      for (let p: TS.Node | undefined = node.parent; p; p = p.parent) {
        if (
          (ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p) || ts.isFunctionDeclaration(p)) &&
          p.name
        ) {
          method = p.name.getText(source);
          break;
        }
      }
      const where = `${file}:${method}`;
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const found = texts(node.arguments[0]);
      if (found === null) out.push({ where, line, sql: null });
      else for (const sql of found) out.push({ where, line, sql });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}
