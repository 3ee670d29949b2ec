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

export function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;
}
