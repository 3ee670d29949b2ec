import type { MemoryFilter } from '../records.js';

/**
 * Appends the WHERE clauses of a memory filter over alias `m`, pushing parameters.
 * tags_match: any / all keep untagged memories, *_strict drop them, exact wants the same set.
 */
export function filterClauses(filter: MemoryFilter, params: unknown[]): string {
  const out: string[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (filter.types?.length) out.push(`m.type = ANY(${p(filter.types)}::text[])`);
  if (filter.documentId !== undefined) out.push(`m.document_id = ${p(filter.documentId)}`);
  if (filter.mentionedBefore) out.push(`m.mentioned_at <= ${p(filter.mentionedBefore)}`);
  if (filter.state && filter.state !== 'all') out.push(`m.state = ${p(filter.state)}`);
  if (filter.tags?.length) {
    const tags = p(filter.tags);
    switch (filter.tagsMatch ?? 'any') {
      case 'any':
        out.push(`(m.tags = '{}' OR m.tags && ${tags}::text[])`);
        break;
      case 'all':
        out.push(`(m.tags = '{}' OR m.tags @> ${tags}::text[])`);
        break;
      case 'any_strict':
        out.push(`m.tags && ${tags}::text[]`);
        break;
      case 'all_strict':
        out.push(`m.tags @> ${tags}::text[]`);
        break;
      case 'exact':
        out.push(`(m.tags @> ${tags}::text[] AND m.tags <@ ${tags}::text[])`);
        break;
    }
  }
  return out.map((c) => ` AND ${c}`).join('');
}

/** A bank-scoped key's banks as SQL sees them (core/bank-scope.ts `scopeParts`). */
export interface BankIdIn {
  exact: string[];
  prefixes: string[];
}

/**
 * The condition that `column` (a bank id) is one of the exact ids or starts with one of the
 * prefixes, pushing its two parameters. A NULL column (a project-wide row) never matches.
 */
export function bankInClause(column: string, idIn: BankIdIn, params: unknown[]): string {
  params.push(idIn.exact, idIn.prefixes);
  const [exact, prefixes] = [params.length - 1, params.length];
  // left(), not LIKE: a prefix is literal text, whatever '%' or '_' it holds.
  return `(${column} = ANY($${exact}::text[])
      OR EXISTS (SELECT 1 FROM unnest($${prefixes}::text[]) AS p(prefix) WHERE left(${column}, length(p.prefix)) = p.prefix))`;
}

/** Opaque cursors are base64url text: most a number (a sequence value or an offset). */
export function encodeCursor(value: number | string): string {
  return Buffer.from(String(value)).toString('base64url');
}

/** The text a cursor holds ('' for none). */
export const cursorText = (cursor: string | undefined) =>
  cursor ? Buffer.from(cursor, 'base64url').toString() : '';

export function decodeCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const n = Number(cursorText(cursor));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** pgvector's text form of a vector (a non-finite component as 0), built in one pass. */
export function vectorLiteral(v: Float32Array): string {
  let out = '[';
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    out += `${i === 0 ? '' : ','}${Number.isFinite(x) ? x : 0}`;
  }
  return `${out}]`;
}
