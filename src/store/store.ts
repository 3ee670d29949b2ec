import type { Scope } from '../contract/vocabulary.js';
import type {
  ApiKeyRecord,
  AuditEntry,
  Bank,
  BankCounts,
  BudgetName,
  DocumentRecord,
  ConsolidationSource,
  Directive,
  Entity,
  Memory,
  MemoryFilter,
  NewMemory,
  ObservationChange,
  ObservationDetail,
  IdempotencyClaim,
  IdempotencyScope,
  IdempotentReply,
  Operation,
  Page,
  Project,
  ProjectLimits,
  Space,
} from './records.js';
import type { EngineMemory, PoolStats } from './db.js';
import type { EvaluationStore } from './sql/evaluations.js';

export type {
  EvaluationFigures,
  EvaluationStore,
  EvaluationSummary,
  NewEvaluation,
  StoredEvaluation,
} from './sql/evaluations.js';

/** A scored hit of one retrieval channel. */
export interface Hit {
  id: string;
  score: number;
}

export interface AuditInput {
  projectId: string;
  actorType: string;
  keyId: string | null;
  action: string;
  bankId: string | null;
  spaceId: string | null;
  status: number;
  requestId: string;
}

/** One rate-limit counter after a request was counted. */
export interface RateCount {
  scope: 'project' | 'key';
  count: number;
  limit: number;
}

/** Outcome of charging a Retain against the items-per-day and stored-memories quotas. */
export type ItemsCharge =
  | { accepted: true }
  | { accepted: false; exceeded: 'retained_items_per_day' | 'stored_memories'; limit: number; used: number };

/**
 * One cost counter to charge: the project's limit `name` (its own setting, else `defaultLimit`;
 * null = unlimited, and then nothing is counted) over the counter (kind, subject, window).
 */
export interface CostCharge {
  name: BudgetName;
  kind: string;
  subject: string;
  windowStart: Date;
  amount: number;
  defaultLimit: number | null;
}

/** A cost counter after a charge: `used` is the count after an accepted charge, before a refused one. */
export interface CostCount {
  name: BudgetName;
  limit: number;
  used: number;
}

/** Outcome of a cost charge: all counters charged, or none (the first refusing counter is named). */
export type CostResult =
  | { accepted: true; counts: CostCount[] }
  | { accepted: false; exceeded: CostCount; amount: number };

/** A bank's wrapped data key (managed encryption). */
export interface BankKeyRecord {
  wrapped: string;
  fingerprint: string;
  /** A background operation is moving the bank's rows to the form its config wants. */
  converting: boolean;
}

/** A memory's stored fields as read for conversion between plain and encrypted form. */
export interface StoredMemoryFields {
  id: string;
  text: string;
  context: string | null;
  metadata: Record<string, unknown>;
  content_hash: string;
  terms: { term: string; tf: number }[];
  /** The plain vector as pgvector text (`[1,2,...]`), or null. */
  embedding: string | null;
  /** The sealed vector, or null. */
  embedding_sealed: string | null;
  /** The form of its text, terms and hashes (its vector may still be in the other form). */
  encrypted: boolean;
}

export interface ConvertedMemory {
  id: string;
  text: string;
  context: string | null;
  metadata: Record<string, unknown>;
  content_hash: string;
  terms: { term: string; tf: number }[];
  /** Plain vector as pgvector text; null in the encrypted form. */
  embedding: string | null;
  embedding_sealed: string | null;
  encrypted: boolean;
}

/** A memory's vector as stored (one of the two forms, or none) with the columns Recall filters on. */
export interface StoredVector {
  id: string;
  seq: number;
  type: string;
  document_id: string | null;
  /** `mentioned_at` in epoch milliseconds. */
  mentioned_ms: number | null;
  tags: string[];
  /** Plain vector as pgvector text. */
  embedding: string | null;
  embedding_sealed: string | null;
}

export interface ConvertedEntity {
  id: string;
  name: string;
  key: string;
  aliases: string[];
  encrypted: boolean;
}

/** Server-wide defaults for projects that do not set a limit themselves (null = unlimited). */
export interface LimitDefaults {
  requestsPerMinute: number | null;
  requestsPerMinutePerKey: number | null;
  retainedItemsPerDay: number | null;
  storedMemories: number | null;
  /** Defaults of the cost budgets (`MNEMO_DEFAULT_CHARACTERS_PER_MINUTE`, ...); absent = unlimited. */
  budgets?: Partial<Record<BudgetName, number | null>>;
}

/**
 * Everything mnemo keeps, behind one narrow interface. Two engines implement it with the
 * same SQL (PGlite embedded, PostgreSQL); core never sees SQL.
 * Methods that take a bank assume the caller checked it belongs to the project.
 */
export interface Store extends EvaluationStore {
  readonly engine: 'pglite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connection pool use (PostgreSQL), null for the embedded engine. */
  poolStats(): PoolStats | null;
  /** Memory of the embedded engine inside this process; null on PostgreSQL. */
  engineMemory(): Promise<EngineMemory | null>;
  /** A value kept in the settings table, created with `init()` on first use (e.g. the key pepper). */
  setting(key: string, init: () => string): Promise<string>;

  // projects and keys
  getProject(id: string): Promise<Project | null>;
  listProjects(): Promise<Project[]>;
  createProject(p: { id: string; name: string; limits?: ProjectLimits }): Promise<Project | null>;
  updateProjectLimits(id: string, limits: ProjectLimits): Promise<Project | null>;
  deleteProject(id: string): Promise<boolean>;
  createApiKey(k: {
    id: string;
    projectId: string;
    name: string;
    scopes: Scope[];
    secretHash: string;
    expiresAt: Date | null;
  }): Promise<ApiKeyRecord>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(projectId: string): Promise<ApiKeyRecord[]>;
  revokeApiKey(projectId: string, id: string): Promise<boolean>;

  // spaces and banks
  createSpace(projectId: string, s: { id: string; name: string }): Promise<Space | null>;
  getSpace(projectId: string, id: string): Promise<Space | null>;
  listSpaces(projectId: string): Promise<Space[]>;
  /** Unassigns the space's banks (never deletes them); returns how many, or null if no such space. */
  deleteSpace(projectId: string, id: string): Promise<number | null>;
  getBank(projectId: string, id: string): Promise<Bank | null>;
  /**
   * Creates the bank if missing (with the given space and org flag) and returns it; a new bank
   * whose space does not exist (deleted meanwhile) is a not_found error.
   */
  ensureBank(
    projectId: string,
    id: string,
    init: { spaceId?: string | null; isOrgBank?: boolean },
  ): Promise<Bank>;
  /**
   * Banks of the project (optionally of one space), oldest first; with `page`, ordered by id and
   * keyset-paged: at most `limit` banks whose id sorts after `after`.
   */
  listBanks(
    projectId: string,
    filter: { spaceId?: string },
    page?: { limit: number; after?: string },
  ): Promise<Bank[]>;
  /**
   * Puts the bank in the space if it is in no space yet, holding the space row meanwhile: a
   * concurrent deletion of the space waits and then unassigns it, so a bank never points at a
   * deleted space. The outcome: attached (or was there already), no such space or bank, or the
   * other space the bank is in.
   */
  attachBankToSpace(
    projectId: string,
    bankId: string,
    spaceId: string,
  ): Promise<{ status: 'attached' | 'no_space' | 'no_bank' } | { status: 'elsewhere'; spaceId: string }>;
  /** Takes the bank out of the space if it is in it at that moment; false when it is not. */
  detachBankFromSpace(projectId: string, bankId: string, spaceId: string): Promise<boolean>;
  /**
   * Sets the bank's name, mission or embedder in one statement. `embedderIfUnset`: records the
   * embedder only when the bank has none yet (first vectors), so a concurrent re-embed's value
   * is never overwritten by a stale read.
   */
  updateBank(
    projectId: string,
    bankId: string,
    patch: {
      name?: string | null;
      mission?: string | null;
      embedder?: string;
      embedderIfUnset?: string;
    },
  ): Promise<Bank | null>;
  /**
   * Merges config changes into the bank's stored overrides in the database, under the bank's
   * row lock: a key with a value is set, a key with `null` is removed, every other key is kept
   * as it is in the row at that moment — concurrent updates of other keys all survive. Returns
   * the overrides as they were just before (read under the lock, so a side effect of a change is
   * decided from the real transition) and the bank after, or null if there is no such bank.
   */
  updateBankConfig(
    projectId: string,
    bankId: string,
    changes: Record<string, unknown>,
  ): Promise<{ before: Record<string, unknown>; bank: Bank } | null>;
  bankCounts(projectId: string, bankId: string): Promise<BankCounts>;
  /** Deletes the bank and all its data; returns the number of memories deleted, or null if absent. */
  deleteBank(projectId: string, bankId: string): Promise<number | null>;

  // memories
  /**
   * Writes memories with their terms and entities in one transaction. With `replaceDocuments`,
   * those documents' previous memories are deleted in the same transaction. If the first
   * memory's id already exists the batch was written before (a repeated operation) and nothing
   * is done. Returns the number of memories written.
   */
  insertMemories(
    projectId: string,
    bankId: string,
    memories: NewMemory[],
    opts?: { replaceDocuments?: string[]; documents?: { id: string; contentHash: string }[] },
  ): Promise<number>;
  listMemories(
    projectId: string,
    bankId: string,
    filter: MemoryFilter & { q?: string; qTerms?: string[][] },
    page: { limit: number; cursor?: string; offset?: number },
  ): Promise<Page<Memory>>;
  getMemories(projectId: string, bankId: string, ids: string[]): Promise<Memory[]>;
  /**
   * Recall's candidates: the memories with their cosine similarity to `vector` (null for a memory
   * without an embedding of its size), read in one query.
   */
  getCandidates(
    projectId: string,
    bankId: string,
    ids: string[],
    vector: Float32Array,
  ): Promise<(Memory & { similarity: number | null })[]>;
  // per-bank vector indexes (sql/bank-index.ts)
  /** The vector size of a bank that should have an HNSW index of its own and has none yet, else null. */
  wantedBankIndex(projectId: string, bankId: string): Promise<number | null>;
  /** Builds the bank's own HNSW index for vectors of `dims` (without blocking writers on PostgreSQL). */
  buildBankIndex(projectId: string, bankId: string, dims: number): Promise<void>;
  /** Drops the bank's own indexes (after the bank is deleted). */
  dropBankIndexes(projectId: string, bankId: string): Promise<void>;
  /**
   * Replaces the vectors of existing memories (a re-embed); ids not in the bank are ignored. A row
   * with `embedding_sealed` stores that instead of a plain vector. With `encrypted`, the rows were
   * prepared for that form and are refused (conflict, reason `encryption_changed`) when the bank's
   * setting no longer wants it.
   */
  setEmbeddings(
    projectId: string,
    bankId: string,
    rows: { id: string; embedding: Float32Array | null; embedding_sealed?: string | null }[],
    opts?: { encrypted?: boolean },
  ): Promise<void>;
  deleteMemory(projectId: string, bankId: string, id: string): Promise<boolean>;

  // stored vectors (sql/vectors.ts), for searching encrypted banks in memory
  /**
   * What an in-memory copy of the bank's vectors is checked against: `generation` (every write),
   * `version` (moved when vectors of existing memories change: re-embed) and the memory count
   * (deletions). Null for no such bank.
   */
  vectorState(
    projectId: string,
    bankId: string,
  ): Promise<{ generation: number; version: number; count: number } | null>;
  /** Stored vectors of the given memories, or of every memory after `afterSeq` in seq order. */
  memoryVectors(
    projectId: string,
    bankId: string,
    sel: { ids?: string[]; afterSeq?: number },
  ): Promise<StoredVector[]>;
  /** Ids of every memory of the bank. */
  memoryIds(projectId: string, bankId: string): Promise<string[]>;
  /**
   * The memories (of `ids`, or all when null) that pass `consolidationCandidates`' conditions,
   * without the vector: for searching an encrypted bank's vectors in memory.
   */
  consolidationEligible(
    projectId: string,
    bankId: string,
    ids: string[] | null,
    opts: { observations: boolean; tags: string[]; beforeSeq: number },
  ): Promise<string[]>;

  // retrieval channels
  semanticSearch(
    projectId: string,
    bankId: string,
    vector: Float32Array,
    filter: MemoryFilter,
    limit: number,
  ): Promise<Hit[]>;
  keywordSearch(
    projectId: string,
    bankId: string,
    terms: string[],
    filter: MemoryFilter,
    limit: number,
  ): Promise<Hit[]>;
  /** Memories whose occurred (or else mentioned) time falls in the window; nearest the middle first. */
  temporalSearch(
    projectId: string,
    bankId: string,
    window: { start: Date; end: Date },
    filter: MemoryFilter,
    limit: number,
  ): Promise<Hit[]>;
  /**
   * Memories linked to the entities named by `probes` (entity names or aliases, any case) and,
   * with `depth` 1 or 2, to the entities co-mentioned with them; scored in [0, 1].
   */
  graphSearch(
    projectId: string,
    bankId: string,
    probes: string[],
    filter: MemoryFilter,
    limit: number,
    depth: number,
  ): Promise<Hit[]>;
  /**
   * Refreshes planner statistics when the data has outgrown them (the embedded engine has no
   * autovacuum); cheap when they are current. Called before searching, outside any transaction.
   */
  maintainStatistics(): Promise<void>;
  /** The latest memories (without document) of a conversation, by session metadata; newest first. */
  latestInSession(
    projectId: string,
    bankId: string,
    session: string,
    limit: number,
  ): Promise<{ text: string; context: string | null }[]>;

  // entities
  listEntities(
    projectId: string,
    bankId: string,
    page: { limit: number; cursor?: string },
  ): Promise<Page<Entity>>;
  /**
   * Entities for resolution, by index lookups: named or aliased one of `keys`, named one of
   * `words`, and, for each word, up to two longer names whose first or last word it is.
   */
  findEntities(projectId: string, bankId: string, keys: string[], words: string[]): Promise<Entity[]>;
  /** Content hashes of documents, by id. */
  documentHashes(projectId: string, bankId: string, ids: string[]): Promise<Map<string, string>>;
  /** Adds language model token usage to the bank's counters. */
  addLlmUsage(projectId: string, bankId: string, inputTokens: number, outputTokens: number): Promise<void>;
  /**
   * Runs `fn` over a read-only snapshot: every query inside sees the same committed state, so a
   * document replaced meanwhile shows either its old or its new memories, never a mix.
   */
  readSnapshot<T>(fn: (store: Store) => Promise<T>): Promise<T>;

  // rate limits and quotas (fixed windows shared by every process on the database)
  /** Counts one request of the project (and key) in the window; returns the counters that have a limit. */
  countRequest(input: {
    projectId: string;
    keyId: string | null;
    windowStart: Date;
    defaults: Pick<LimitDefaults, 'requestsPerMinute' | 'requestsPerMinutePerKey'>;
  }): Promise<RateCount[]>;
  /** Counts `items` retained items of the day unless a quota would be exceeded (then nothing is counted). */
  chargeItems(input: {
    projectId: string;
    items: number;
    windowStart: Date;
    defaults: Pick<LimitDefaults, 'retainedItemsPerDay' | 'storedMemories'>;
  }): Promise<ItemsCharge>;
  /** Gives back items charged by a Retain that then failed. */
  refundItems(projectId: string, items: number, windowStart: Date): Promise<void>;
  projectUsage(
    projectId: string,
    windows: { minuteStart: Date; dayStart: Date },
  ): Promise<{ requests_this_minute: number; retained_items_today: number; stored_memories: number }>;
  /**
   * Charges cost counters in one statement, all or nothing: unless `force`, a counter is only
   * charged when its count stays within its limit (a zero amount asks for room: count < limit),
   * and a refusal gives back what the same call charged on other counters. `force` charges
   * regardless (cost already incurred). Counters without a limit are not written.
   */
  chargeCost(projectId: string, charges: CostCharge[], force: boolean): Promise<CostResult>;
  /** Current counts of cost counters (0 for none). */
  costCounts(
    projectId: string,
    counters: Pick<CostCharge, 'name' | 'kind' | 'subject' | 'windowStart'>[],
  ): Promise<Map<BudgetName, number>>;
  /**
   * Puts a claimed operation of a project over its budget back to pending until `delayMs` from
   * now, without using up one of its attempts (waiting is not failing).
   */
  deferOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    delayMs: number,
    reason: string,
  ): Promise<void>;
  /** Deletes counters of windows that started before `before`; returns how many. */
  pruneRateCounters(before: Date): Promise<number>;

  // managed encryption (sql/encryption.ts): data keys and conversion batches
  /** The bank's wanted form (its config) and its data key, if it has one; null for no such bank. */
  bankEncryption(
    projectId: string,
    bankId: string,
  ): Promise<{ target: 'none' | 'managed'; key: BankKeyRecord | null } | null>;
  /** Stores the bank's data key unless it has one already; returns the one that is kept. */
  createBankKey(
    projectId: string,
    bankId: string,
    key: { wrapped: string; fingerprint: string },
    converting: boolean,
  ): Promise<BankKeyRecord>;
  setBankKeyConverting(projectId: string, bankId: string, converting: boolean): Promise<void>;
  listBankKeys(): Promise<{ project_id: string; bank_id: string; wrapped: string; fingerprint: string }[]>;
  /** Replaces wrapped keys (master key rotation), all in one transaction. */
  rewrapBankKeys(
    updates: { project_id: string; bank_id: string; wrapped: string; fingerprint: string }[],
  ): Promise<void>;
  /** Banks whose config asks for encryption but that have no data key yet. */
  countUnkeyedEncryptedBanks(): Promise<number>;
  /**
   * Converts up to `limit` memories not yet in the wanted form (with their keyword terms) in one
   * transaction under the bank lock; 0 when none are left or the bank's config changed meanwhile.
   */
  convertMemories(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (rows: StoredMemoryFields[]) => ConvertedMemory[],
  ): Promise<number>;
  /** The same for entities; an entity whose new key exists already is merged into that one. */
  convertEntities(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (rows: { id: string; name: string; name_key: string; aliases: string[] }[]) => ConvertedEntity[],
  ): Promise<number>;
  /** The same for the payloads of the bank's operations (queued Retain items). */
  convertPayloads(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (payload: unknown) => unknown,
  ): Promise<number>;
  /** The same for the bank's directives (name and text), all in one transaction. */
  convertDirectives(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    convert: (d: { id: string; name: string; text: string }) => { name: string; text: string },
  ): Promise<number>;
  /**
   * The same for the bank's own free text (name, mission, config text): `convert` gets them as
   * stored and returns their new form; the config values it returns are merged into the config.
   */
  convertBankText(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    convert: (b: { name: string | null; mission: string | null; config: Record<string, unknown> }) => {
      name: string | null;
      mission: string | null;
      config: Record<string, unknown>;
    },
  ): Promise<void>;
  /** The same for the content hashes of the bank's documents (sealed in an encrypted bank). */
  convertDocuments(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (hash: string) => string,
  ): Promise<number>;
  /** Under the bank lock: if no row is left in the wrong form, ends the conversion (true). */
  finishConversion(projectId: string, bankId: string): Promise<boolean>;

  // audit
  appendAudit(entry: AuditInput): Promise<void>;
  /**
   * An unauthenticated refusal: the first `inFull` of a project's minute are ordinary entries,
   * the rest add to that minute's one aggregate entry (`count`). One statement, shared by
   * every process on the database.
   */
  appendRefusal(entry: AuditInput, inFull: number): Promise<void>;
  listAudit(
    projectId: string,
    filter: { bankId?: string; action?: string; since?: Date; until?: Date },
    page: { limit: number; cursor?: string },
  ): Promise<Page<AuditEntry>>;

  // documents
  listDocuments(
    projectId: string,
    bankId: string,
    page: { limit: number; offset: number },
  ): Promise<{ items: DocumentRecord[]; total: number }>;
  getDocument(projectId: string, bankId: string, id: string): Promise<DocumentRecord | null>;
  /** Deletes a document and its memories; the number of memories deleted, or null if absent. */
  deleteDocument(projectId: string, bankId: string, id: string): Promise<number | null>;
  countMemories(
    projectId: string,
    bankId: string,
    filter: MemoryFilter & { q?: string; qTerms?: string[][] },
  ): Promise<number>;

  // operations (durable background work) and idempotency keys
  /**
   * Inserts an operation; an existing id is returned as is (`created: false`). With `onceAmong`,
   * an operation of the same kind of the bank in one of those states is returned instead of
   * inserting another, decided under the bank's row lock (concurrent callers queue one).
   */
  insertOperation(o: {
    projectId: string;
    bankId: string;
    id: string;
    kind: string;
    payload: unknown;
    itemsCount: number;
    onceAmong?: ('pending' | 'processing')[];
  }): Promise<{ operation: Operation; created: boolean }>;
  getOperation(projectId: string, bankId: string, id: string): Promise<Operation | null>;
  listOperations(
    projectId: string,
    bankId: string,
    filter: { status?: string },
    page: { limit: number; cursor?: string },
  ): Promise<Page<Operation>>;
  /** Cancels a pending operation; null when it is not pending (or absent). */
  cancelOperation(projectId: string, bankId: string, id: string): Promise<Operation | null>;
  /**
   * Claims the next runnable operation (pending, or processing with an expired lease), fairly:
   * the project, then the bank, whose last claim is oldest goes first. `progress` is where a
   * sliced operation got to (null on its first run).
   */
  claimOperation(
    workerId: string,
    leaseMs: number,
  ): Promise<{ operation: Operation; projectId: string; payload: unknown; progress: unknown } | null>;
  /**
   * Ends one slice of a claimed operation: records its progress and the memories it created and
   * gives the operation back, still processing, to be claimed again in its bank's next turn.
   */
  yieldOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    progress: unknown,
    memoriesCreated: number,
  ): Promise<void>;
  renewOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    leaseMs: number,
  ): Promise<boolean>;
  finishOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    outcome: { status: 'completed' | 'failed'; memoriesCreated?: number; error?: string },
  ): Promise<void>;
  retryOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    delayMs: number,
    error: string,
  ): Promise<void>;
  countPendingOperations(): Promise<number>;
  /** `staleMs`: an in-progress claim older than this was left by a dead request and is taken over. */
  claimIdempotencyKey(
    scope: IdempotencyScope,
    requestHash: string,
    staleMs: number,
  ): Promise<IdempotencyClaim>;
  /** Keeps the answer of a claimed key; nothing is kept when the claim is gone (dropped meanwhile). */
  saveIdempotentResponse(scope: IdempotencyScope, reply: IdempotentReply): Promise<void>;
  releaseIdempotencyKey(scope: IdempotencyScope): Promise<void>;
  /** Drops the kept answers of a bank (its encryption setting switched, or it was deleted). */
  deleteIdempotentResponses(projectId: string, bankId: string): Promise<void>;

  // directives (sql/directives.ts)
  /** A bank's directives, highest priority first. */
  listDirectives(projectId: string, bankId: string): Promise<Directive[]>;
  getDirective(projectId: string, bankId: string, id: string): Promise<Directive | null>;
  /**
   * Inserts a directive unless the bank holds `max` already (null then): counted and inserted
   * under the bank's row lock, so concurrent inserts cannot pass the limit together.
   */
  insertDirective(
    projectId: string,
    bankId: string,
    d: { id: string; name: string; text: string; priority: number; tags: string[]; active: boolean },
    max: number,
  ): Promise<Directive | null>;
  updateDirective(
    projectId: string,
    bankId: string,
    id: string,
    patch: { name?: string; text?: string; priority?: number; tags?: string[]; active?: boolean },
  ): Promise<Directive | null>;
  deleteDirective(projectId: string, bankId: string, id: string): Promise<boolean>;

  // observations and consolidation (sql/observations.ts)
  /** The highest memory seq consolidation has processed (0 before the first run). */
  consolidationCursor(projectId: string, bankId: string): Promise<number>;
  /** Memories after `afterSeq` other than consolidated observations, oldest first. */
  consolidationSources(
    projectId: string,
    bankId: string,
    afterSeq: number,
    limit: number,
  ): Promise<ConsolidationSource[]>;
  /**
   * Nearest memories with exactly these tags: consolidated observations, or other memories
   * retained before `beforeSeq` that support no observation yet. `bankSize`: the bank's memory
   * count as the caller read it (past the exact-search size, memories are found by the index).
   */
  consolidationCandidates(
    projectId: string,
    bankId: string,
    vector: Float32Array,
    opts: { observations: boolean; tags: string[]; beforeSeq: number; limit: number; bankSize: number },
  ): Promise<Hit[]>;
  /** Proof and conflicts of consolidated observations; ids that are not ones are left out. */
  observationDetails(
    projectId: string,
    bankId: string,
    ids: string[],
  ): Promise<Map<string, ObservationDetail>>;
  /**
   * Applies one consolidation step and moves the cursor from `from` to `to` in one transaction;
   * false (and nothing written) when another run moved the cursor first.
   */
  saveObservation(
    projectId: string,
    bankId: string,
    change: ObservationChange | null,
    cursor: { from: number; to: number },
  ): Promise<boolean>;
  /**
   * Deletes consolidated observations left with no supporting memory, and refreshes stale proof
   * counts, over one page of the bank's observations (ids after `page.after`, default the first
   * 500); `next` is where the next page starts, null after the last.
   */
  pruneObservations(
    projectId: string,
    bankId: string,
    page?: { after: string; limit: number },
  ): Promise<{ pruned: number; next: string | null }>;
}
