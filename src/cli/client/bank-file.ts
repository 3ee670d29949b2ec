/**
 * The JSONL form of a whole bank, written by `mnemo export` and read by `mnemo import`. One JSON
 * object per line, told apart by `kind`, in this order: `header`, `bank`, `directive`*,
 * `entity`*, `memory`* (oldest first, so an import stores them in the original order),
 * `document`*, `end`. The `end` line carries the counts, so a cut-off file is recognised.
 */
import type {
  BankProfile,
  Entity,
  FactType,
  Memory,
  RetainItem,
} from '../../../packages/client/src/index.js';

export const FORMAT = 'mnemo-bank';
export const FORMAT_VERSION = 1;

export interface HeaderLine {
  kind: 'header';
  format: typeof FORMAT;
  version: number;
  bank: string;
  exported_at: string;
}

/** The bank's identity and its config overrides (the keys set on it, not the defaults). */
export interface BankLine {
  kind: 'bank';
  id: string;
  name: string | null;
  mission: string | null;
  space_id: string | null;
  disposition: BankProfile['disposition'];
  config: Record<string, unknown>;
}

export type EntityLine = { kind: 'entity' } & Omit<Entity, 'id'>;

/** A directive of the bank (standing instructions for Reflect). */
export interface DirectiveLine {
  kind: 'directive';
  name: string;
  text: string;
  priority: number;
  tags: string[];
  active: boolean;
}

/**
 * Everything that reproduces a memory through Retain: `text`, `type`, `context`, `mentioned_at`
 * (the Retain `timestamp`, which also re-derives `occurred_*` from the text), `tags`, `metadata`,
 * typed `entities` and `document_id`. `id`, `created_at`, `occurred_*` and `chunk_id` are kept
 * for reference; a new bank gets its own.
 */
export interface MemoryLine {
  kind: 'memory';
  text: string;
  type: FactType;
  context: string | null;
  mentioned_at: string | null;
  occurred_start: string | null;
  occurred_end: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  entities: { text: string; type: string }[];
  document_id: string | null;
  chunk_id: string | null;
  id: string;
  created_at: string;
}

export interface DocumentLine {
  kind: 'document';
  id: string;
  memory_count: number;
}

export interface EndLine {
  kind: 'end';
  memories: number;
  entities: number;
  documents: number;
  directives: number;
}

export type BankFileLine =
  | HeaderLine
  | BankLine
  | DirectiveLine
  | EntityLine
  | MemoryLine
  | DocumentLine
  | EndLine;

/**
 * An observation written by the server's consolidation (it lists its sources). Derived data: an
 * export leaves it out, and the importing bank consolidates its own.
 */
export const isConsolidatedObservation = (m: Memory) =>
  m.type === 'observation' && Array.isArray(m.metadata.source_memory_ids);

/** A listed memory as an export line; entity names get their types from the bank's entity list. */
export function memoryLine(m: Memory, entityTypes: Map<string, string>): MemoryLine {
  return {
    kind: 'memory',
    text: m.text,
    type: m.type,
    context: m.context,
    mentioned_at: m.mentioned_at,
    occurred_start: m.occurred_start,
    occurred_end: m.occurred_end,
    tags: m.tags,
    metadata: m.metadata,
    entities: m.entities.map((name) => ({ text: name, type: entityTypes.get(name) ?? 'OTHER' })),
    document_id: m.document_id,
    chunk_id: m.chunk_id,
    id: m.id,
    created_at: m.created_at,
  };
}

/**
 * The Retain item of an import line: an exported memory (stored verbatim: entity names exactly as
 * exported, no re-resolution), or a plain Retain item (`{content, ...}`) passed as it is.
 * Returns null for the other kinds.
 */
export function retainItemOf(line: Record<string, unknown>, lineNo: number): RetainItem | null {
  if (line.kind === 'memory') {
    const m = line as unknown as MemoryLine;
    if (typeof m.text !== 'string' || m.text === '')
      throw new Error(`line ${lineNo}: a memory needs its text`);
    return {
      content: m.text,
      fact_type: m.type,
      context: m.context ?? undefined,
      timestamp: m.mentioned_at ?? undefined,
      tags: m.tags?.length ? m.tags : undefined,
      metadata: m.metadata && Object.keys(m.metadata).length ? m.metadata : undefined,
      entities: m.entities?.length ? m.entities : undefined,
      resolve_entities: false,
      document_id: m.document_id ?? undefined,
    };
  }
  if (line.kind === undefined || line.kind === 'item') {
    if (typeof line.content !== 'string')
      throw new Error(`line ${lineNo}: expected a memory or a Retain item with content`);
    const { kind: _kind, ...item } = line;
    return item as unknown as RetainItem;
  }
  if (['header', 'bank', 'directive', 'entity', 'document', 'end'].includes(String(line.kind))) return null;
  throw new Error(`line ${lineNo}: unknown kind '${String(line.kind)}'`);
}
