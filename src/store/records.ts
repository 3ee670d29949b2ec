/**
 * The records the store keeps and returns: the shapes of its rows as core and the API see them.
 * They live on the store's side so that the store depends on no core module; core re-exports
 * them from core/types.ts.
 */
import type { FactType, Scope } from '../contract/vocabulary.js';

export interface Project {
  id: string;
  name: string;
  limits: ProjectLimits;
  created_at: Date;
}

export interface ProjectLimits {
  requests_per_minute?: number | null;
  /** Applies to each API key of the project separately. */
  requests_per_minute_per_key?: number | null;
  retained_items_per_day?: number | null;
  stored_memories?: number | null;
  retained_items_per_minute?: number | null;
  characters_per_minute?: number | null;
  characters_per_day?: number | null;
  entities_per_minute?: number | null;
  entities_per_day?: number | null;
  model_calls_per_minute?: number | null;
  model_calls_per_day?: number | null;
  model_tokens_per_minute?: number | null;
  model_tokens_per_day?: number | null;
  recall_units_per_minute?: number | null;
  recall_units_per_day?: number | null;
}

/** The cost budgets among the project limits (see core/budgets.ts). */
export type BudgetName = Exclude<
  keyof ProjectLimits,
  'requests_per_minute' | 'requests_per_minute_per_key' | 'retained_items_per_day' | 'stored_memories'
>;

export interface ApiKeyRecord {
  id: string;
  project_id: string;
  name: string;
  scopes: Scope[];
  /** Bank ids and `prefix*` patterns the key is limited to; null = every bank. */
  banks: string[] | null;
  secret_hash: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export interface Space {
  id: string;
  name: string;
  created_at: Date;
  bank_count: number;
}

export interface Bank {
  project_id: string;
  id: string;
  space_id: string | null;
  is_org_bank: boolean;
  name: string | null;
  mission: string | null;
  config: Record<string, unknown>;
  embedder: string | null;
  memory_count: number;
  term_total: number;
  llm_input_tokens: number;
  llm_output_tokens: number;
  /** Moves on with every write that can change what Recall returns from the bank. */
  generation: number;
  created_at: Date;
  updated_at: Date;
}

export interface BankCounts {
  memory_count: number;
  entity_count: number;
  document_count: number;
}

export interface EntityInput {
  text: string;
  type: string;
  /** Another spelling of this entity seen in the text, recorded as an alias. */
  alias?: string;
  /** The store key, precomputed (a keyed hash) when `text` is sealed for an encrypted bank. */
  key?: string;
}

/** A memory ready to be written: everything computed, nothing left to the store but SQL. */
export interface NewMemory {
  id: string;
  type: FactType;
  text: string;
  context: string | null;
  occurred_start: Date | null;
  occurred_end: Date | null;
  mentioned_at: Date | null;
  tags: string[];
  metadata: Record<string, unknown>;
  document_id: string | null;
  chunk_id: string | null;
  content_hash: string;
  embedding: Float32Array;
  /** The embedding sealed with the bank's data key (encrypted banks; set by the encryption layer). */
  embedding_sealed?: string;
  /** Keyword index terms with their weights (term frequency, possibly fractional for context). */
  terms: Map<string, number>;
  /** Entity names (already resolved to their canonical spelling) with types. */
  entities: EntityInput[];
  /** Sealed for an encrypted bank (set by the encryption layer, never by core). */
  encrypted?: boolean;
}

export interface Memory {
  id: string;
  bank_id: string;
  type: FactType;
  text: string;
  context: string | null;
  occurred_start: Date | null;
  occurred_end: Date | null;
  mentioned_at: Date | null;
  tags: string[];
  metadata: Record<string, unknown>;
  document_id: string | null;
  chunk_id: string | null;
  entities: string[];
  created_at: Date;
  /** Curation: an `invalidated` memory is kept and listed but Recall, Reflect and consolidation leave it out. */
  state: MemoryState;
  invalidation_reason: string | null;
  /** When a client last edited it (PATCH), null if never. */
  edited_at: Date | null;
}

export type MemoryState = 'valid' | 'invalidated';

export interface Entity {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mention_count: number;
  first_seen: Date;
  last_seen: Date;
}

export type TagsMatch = 'any' | 'all' | 'any_strict' | 'all_strict' | 'exact';

/** Filters shared by listing and every recall channel. */
export interface MemoryFilter {
  types?: FactType[];
  tags?: string[];
  tagsMatch?: TagsMatch;
  documentId?: string;
  /** Only memories mentioned at or before this time (Recall "as of"). */
  mentionedBefore?: Date;
  /** Curation state: Recall searches `valid` memories only; a listing may ask for either or `all`. */
  state?: MemoryState | 'all';
}

export interface AuditEntry {
  id: string;
  at: Date;
  actor: { type: string; key_id: string | null };
  action: string;
  bank_id: string | null;
  space_id: string | null;
  status: number;
  request_id: string;
  /** Requests this entry stands for: 1, or a minute's refusals beyond those kept in full. */
  count: number;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export type OperationStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** A durable background operation (async Retain, consolidation, re-encryption, ...). */
export interface Operation {
  id: string;
  bank_id: string;
  kind: string;
  status: OperationStatus;
  items_count: number;
  memories_created: number;
  error: string | null;
  attempts: number;
  /** What a finished operation hands back beside its counts (an export's download), or null. */
  result_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Whose `Idempotency-Key` it is: one caller's keys never meet another's, so nobody can replay an
 * answer made for someone else (`caller` is `key:<key id>`, `operator` or `anonymous`).
 */
export interface IdempotencyScope {
  projectId: string;
  caller: string;
  key: string;
}

/**
 * A finished request's answer as kept for its retries. `withheld`: the answer carried a secret
 * (a minted key), so only `{id}` is kept and a retry is told it is already done. `encrypted`:
 * `response` is the answer sealed with the data key of `bankId` (a string), never plaintext.
 */
export interface IdempotentReply {
  status: number;
  response: unknown;
  withheld: boolean;
  bankId: string | null;
  encrypted?: boolean;
}

export type IdempotencyClaim =
  | { state: 'new' }
  | { state: 'in_progress' }
  | { state: 'mismatch' }
  | ({ state: 'done' } & IdempotentReply);

/** A hard rule of a bank for Reflect; tagged ones apply only to requests whose tags match. */
export interface Directive {
  id: string;
  bank_id: string;
  name: string;
  text: string;
  priority: number;
  tags: string[];
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export type ObservationRelation = 'supports' | 'contradicts';

/** What stands behind a consolidated observation. */
export interface ObservationDetail {
  id: string;
  proof_count: number;
  source_memory_ids: string[];
  contradicting_memory_ids: string[];
}

/** A memory waiting for consolidation, with its place in the bank's order and its vector. */
export interface ConsolidationSource extends Memory {
  seq: number;
  embedding: Float32Array;
}

/** One consolidation step: write (or rewrite) an observation and link memories to it. */
export interface ObservationChange {
  id: string;
  /** The observation's new stored form; absent when only links change. */
  memory?: NewMemory;
  writer: 'rules' | 'llm';
  links: { memoryId: string; relation: ObservationRelation }[];
}

/** A document: memories retained under one document id. */
export interface DocumentRecord {
  id: string;
  bank_id: string;
  content_hash: string;
  memory_count: number;
  created_at: Date;
  updated_at: Date;
}

/** A scored hit of one retrieval channel. */
export interface Hit {
  id: string;
  score: number;
}
