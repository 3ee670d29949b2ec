import { EXACT_FALLBACK_ROWS, EXACT_SEARCH_LIMIT } from '../exact-search.js';
import type { Hit, MemoryFilter } from '../records.js';
import type { Db, Queryable } from '../db.js';
import { bankIndexName } from './bank-index-name.js';
import { type BankEncryption, ENCRYPTION_COLUMNS, type EncryptionRow, encryptionOf } from './encryption.js';
import { graphChannelSql } from './entities.js';
import { filterClauses, vectorLiteral } from './filters.js';
import { BANK_VERSION, type KeywordIndex } from '../keyword-index.js';
import type { KeywordMemory } from '../keyword-memory.js';
import { keywordFilterOf, searchKeywordIndex } from '../keyword-memory-search.js';

export type { Hit } from '../records.js';

/** What one Recall asks of one bank's retrieval channels; a channel given null is off. */
export interface ChannelQuery {
  vector: Float32Array | null;
  terms: string[];
  window: { start: Date; end: Date } | null;
  /** Entity probes of the graph channel (see `graphSearch`), and its depth. */
  graph: { probes: string[]; depth: number } | null;
  /**
   * The bank's memory count as last read (its row, before the snapshot): in a snapshot, the
   * channels can then go with its first statement (`openSearchChannels`).
   */
  expectedSize?: number;
}

/** Each channel's hits, best first (empty when it was off). */
export interface ChannelHits {
  semantic: Hit[];
  keyword: Hit[];
  temporal: Hit[];
  graph: Hit[];
}

/** A bank's search opened in a snapshot (`openBankSearch`). */
export interface BankSearch {
  /** The bank's memory count (0 for no such bank). */
  size: number;
  /** Its encryption state, as `bankEncryption` reads it; null for no such bank. */
  encryption: BankEncryption | null;
  /** The vector index walk set up in the snapshot, for this vector size and limit (null: none). */
  walk: { dims: number; limit: number } | null;
  /** The bank's version in the snapshot (`BANK_VERSION`); null for no such bank. */
  version: string | null;
}

/** Recall's retrieval channels in SQL: semantic, keyword, temporal, and all of them at once with the graph. */
export interface SearchStore {
  /**
   * Every channel of `q` in one statement (after one that sets the vector index walk up, when
   * the bank is past the exact-search size): the same hits as the four channel methods.
   * `opened`: what `openBankSearch` set up in this snapshot, whose walk set-up is then not sent again.
   */
  searchChannels(
    projectId: string,
    bankId: string,
    q: ChannelQuery,
    filter: MemoryFilter,
    limit: number,
    opened?: BankSearch,
  ): Promise<ChannelHits>;
  /**
   * Inside a snapshot only (the walk's settings are its transaction's): in one statement, the
   * bank's size and encryption state, and the vector index walk set up for `searchChannels`
   * of vectors of `dims` and `limit` hits. A Recall's round trip fewer: the encryption layer
   * reads the state before the channels and the walk needs its own statement before them.
   */
  openBankSearch(projectId: string, bankId: string, dims: number, limit: number): Promise<BankSearch>;
  /**
   * Inside a snapshot only: `openBankSearch` and `searchChannels` of a plain bank sent together
   * (one round trip; the embedded engine not held between them while the process answers), the
   * channels written for the bank as last seen: `expectedSize` memories (its row as read before
   * the snapshot) and its current keyword copy. When the snapshot shows it otherwise (past the
   * exact-search size the other way, written since its copy), what differs is searched again,
   * so the hits are always `searchChannels`' after `openBankSearch`. For a bank with a data key
   * they are not: its terms are hashed (the encryption layer searches again with `opened`).
   * `last`: the channels end the snapshot (`queryLast`), and the hits are null where they would
   * be searched again (or a walk came back short).
   */
  openSearchChannels(
    projectId: string,
    bankId: string,
    q: ChannelQuery,
    filter: MemoryFilter,
    limit: number,
    expectedSize: number,
    last?: boolean,
  ): Promise<{ opened: BankSearch; hits: ChannelHits | null }>;
  /**
   * In a snapshot, as its last statements: `openSearchChannels` of a plain bank with the channels
   * ending the snapshot (`queryLast`), so that the engine is not held while the process fuses
   * them; and the bank's version, to read the candidates at (`getCandidatesAt`). Null when the
   * channels would need a statement more (the bank not as last seen, a short walk, a data key):
   * then search in a snapshot of its own; null at once where it may well (`mayEndWithChannels`).
   * Needs `q.expectedSize`.
   */
  lastSearchChannels(
    projectId: string,
    bankId: string,
    q: ChannelQuery,
    filter: MemoryFilter,
    limit: number,
  ): Promise<(ChannelHits & { version: string }) | null>;
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
   * Refreshes planner statistics when the data has outgrown them (the embedded engine has no
   * autovacuum); cheap when they are current. Called before searching, outside any transaction.
   */
  maintainStatistics(): Promise<void>;
}

/** BM25 parameters: the usual defaults, which suit short conversational memories. */
export const K1 = 1.2;
export const B = 0.75;

/**
 * Vector sizes with a partial HNSW index (migration 6): the local embedder's 100 and the usual
 * sizes of embedding APIs. The `embedding` column is untyped, so each index is on the cast
 * `embedding::vector(n)` of the rows of that size, and a query must use the same expression.
 */
export const HNSW_DIMENSIONS = [100, 256, 384, 512, 768, 1024, 1536] as const;

/** Postings the first keyword phase may read; rarer terms first (see `keywordSearch`). */
export const DRIVER_POSTINGS = 2000;

/** Fewest candidates the second keyword phase rescores exactly (more when more are asked for). */
const KEYWORD_CANDIDATES = 100;

/** Candidates the HNSW walk keeps: at least the pgvector default, more for bigger pools. */
const efSearch = (limit: number) => Math.min(1000, Math.max(64, limit * 2));

/**
 * Tuples the iterative walk may scan before it gives up (pgvector's `hnsw.max_scan_tuples`, 20,000
 * by default): ten per candidate kept. Each one scanned is a heap row read to test the filter, so a
 * filter passing few memories made the walk read 20,000 rows (~40k buffers, seconds at 1M) before
 * coming back short; the exact search of the newest rows completes it after this many instead. A
 * filter passing a tenth of the bank still fills the pool from it.
 */
const scanTuples = (limit: number) => Math.min(20_000, 10 * efSearch(limit));

/** Occurred spans up to this long are found by their start; longer ones by their own index. */
export const LONG_SPAN = '31 days';

/**
 * Rows the temporal channel reads, at most, among the spans over the window's middle, before
 * its filter, per hit asked for: they all score the same, so any of them will do, but a filter
 * passing few of them must not make it read on through the bank.
 */
const TEMPORAL_SCAN = 10;

/** Tables past this many pages are analyzed a column per statement on the embedded engine. */
const ANALYZE_BY_COLUMN_PAGES = 64;

/** Statistics target of those columns (their sample: 300 rows per unit); PostgreSQL's default is 100. */
const BIG_TABLE_STATISTICS_TARGET = 40;

/** How often, at most, a process checks whether the planner statistics are stale. */
const STATISTICS_CHECK_MS = 1000;

/**
 * The channels' queries, each over `$1` (project), `$2` (bank) and `$3` (limit), pushing its own
 * parameters into `params`: (id, score, k1, k2) rows, best first by k1 and then by k2 descending,
 * so that one statement can run several and keep each one's order. `where`: filter clauses over
 * alias `m` whose parameters are in `params` already.
 */
const param = (params: unknown[], value: unknown) => {
  params.push(value);
  return `$${params.length}`;
};

/** Orders by the plain column, which no HNSW index covers: an exact scan of the bank's rows. */
function exactVectorSql(params: unknown[], vector: Float32Array, where: string): string {
  const v = param(params, vectorLiteral(vector));
  const dims = param(params, vector.length);
  return `SELECT m.id::text AS id, 1 - (m.embedding <=> ${v}::vector) AS score,
       (m.embedding <=> ${v}::vector)::float8 AS k1, m.seq AS k2 FROM memories m
     WHERE m.project_id = $1 AND m.bank_id = $2 AND vector_dims(m.embedding) = ${dims}${where}
     ORDER BY m.embedding <=> ${v}::vector, m.seq DESC LIMIT $3`;
}

/**
 * The exact search after a short HNSW walk: over the bank's newest EXACT_FALLBACK_ROWS rows, read
 * through its `seq` index, and, when the filter names types, the newest EXACT_FALLBACK_ROWS of
 * each of them (migration 44's index), however old; then filtered. A walk comes back short when
 * the filter passes few of the rows it reached; an exact search of the whole bank for them read
 * every row (seconds at a million). A rare type is so searched whole; for other filters (tags,
 * time) no bank-bounded index serves, and past the newest rows the walk's hits stand for the
 * older ones.
 */
function recentExactVectorSql(
  params: unknown[],
  vector: Float32Array,
  where: string,
  filter: MemoryFilter,
): string {
  const v = param(params, vectorLiteral(vector));
  const dims = param(params, vector.length);
  // The type branch starts below the newest rows, so no memory is read twice.
  const byType = filter.types?.length
    ? ` UNION ALL SELECT t.* FROM (SELECT DISTINCT unnest(${param(params, filter.types)}::text[]) AS type) ty,
          LATERAL (SELECT * FROM memories WHERE project_id = $1 AND bank_id = $2 AND type = ty.type
                     AND seq < (SELECT min(seq) FROM recent)
                   ORDER BY seq DESC LIMIT ${EXACT_FALLBACK_ROWS}) t`
    : '';
  return `WITH recent AS MATERIALIZED (SELECT * FROM memories WHERE project_id = $1 AND bank_id = $2
         ORDER BY seq DESC LIMIT ${EXACT_FALLBACK_ROWS})
     SELECT m.id::text AS id, 1 - (m.embedding <=> ${v}::vector) AS score,
       (m.embedding <=> ${v}::vector)::float8 AS k1, m.seq AS k2
     FROM (SELECT * FROM recent${byType}) m
     WHERE vector_dims(m.embedding) = ${dims}${where}
     ORDER BY m.embedding <=> ${v}::vector, m.seq DESC LIMIT $3`;
}

/**
 * The HNSW walk over the index of the vector's size (or the bank's own, which a custom plan
 * chooses); the LIMIT keeps the walk in its own subquery, re-sorted outside (relaxed order).
 */
function indexedVectorSql(params: unknown[], vector: Float32Array, where: string): string {
  const dims = vector.length;
  const v = param(params, vectorLiteral(vector));
  return `SELECT id::text AS id, 1 - d AS score, d::float8 AS k1, seq AS k2 FROM (
       SELECT m.id, m.seq, (m.embedding::vector(${dims})) <=> ${v}::vector(${dims}) AS d FROM memories m
       WHERE m.project_id = $1 AND m.bank_id = $2 AND vector_dims(m.embedding) = ${dims}${where}
       ORDER BY (m.embedding::vector(${dims})) <=> ${v}::vector(${dims}) LIMIT $3) c`;
}

/**
 * BM25 in two phases, as the function `mnemo_keyword_search` (migration 6) documents: exact when
 * the query's postings fit in DRIVER_POSTINGS (any bank of a few thousand memories); otherwise the
 * common terms only rescore the candidates of the rare ones. Score: BM25 over the IDF mass of the
 * query terms the bank knows, at most 1. The function returns its hits best first.
 */
function keywordSql(params: unknown[], terms: string[], filter: MemoryFilter, limit: number): string {
  const p = (v: unknown) => param(params, v);
  const f = keywordFilterOf(filter);
  return `SELECT k.memory_id::text AS id, k.score, k.ord::float8 AS k1, 0::bigint AS k2
     FROM mnemo_keyword_search($1::text, $2::text, ${p(terms)}::text[], $3::int,
       ${p(Math.max(limit, KEYWORD_CANDIDATES))}::int, ${p(DRIVER_POSTINGS)}::int, ${p(K1)}::float8, ${p(B)}::float8,
       ${p(f.types)}::text[], ${p(f.tags)}::text[], ${p(filter.tagsMatch ?? 'any')}::text, ${p(f.documentId)}::text,
       ${p(f.mentionedBefore)}::timestamptz)
       WITH ORDINALITY AS k(memory_id, score, ord)`;
}

/**
 * A memory is in the window when what it tells of (occurred) or when it was said (mentioned)
 * falls inside. Score 1 at the middle of the window falling to 0.5 at its edges, from the nearer
 * of the two times (LEAST skips the NULL of a time outside). The best `$3` by that distance are
 * among the best `$3` by each time alone, and those are read in index order outward from the
 * middle, each part stopping at its LIMIT: a wide window over a big bank reads a few hundred
 * rows, not every row inside it. Each part is ordered by its index's column alone, so that no
 * plan sorts the rows of its range (with a tie-break the planner may sort them all when it
 * misjudges their number); which of several rows at the same time a part keeps is arbitrary. The parts: said after the middle, said before it; occurred
 * starting after it, occurred ending before it (nearest first); occurred over the middle (at
 * distance 0, any of them; among the spans of at most LONG_SPAN, the first TEMPORAL_SCAN
 * rows per hit by end from the middle, so that a filter passing few cannot make it read on) and the
 * longer spans (few rows, their own partial index, migration 9).
 */
function temporalSql(params: unknown[], window: { start: Date; end: Date }, where: string): string {
  const ws = `${param(params, window.start)}::timestamptz`;
  const we = `${param(params, window.end)}::timestamptz`;
  const mid = `(${ws} + (${we} - ${ws}) / 2)`;
  const end = 'coalesce(m.occurred_end, m.occurred_start)';
  const cols = 'm.id, m.seq, m.occurred_start, m.occurred_end, m.mentioned_at';
  const part = (cond: string, order: string) =>
    `(SELECT ${cols} FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2 AND ${cond}${where}
         ORDER BY ${order} LIMIT $3)`;
  return `WITH w AS (SELECT ${ws} AS ws, ${we} AS we, ${mid} AS mid,
                greatest(extract(epoch FROM ${we} - ${ws}) / 2, 1) AS half),
     inside AS (
       ${part(`m.mentioned_at >= ${mid} AND m.mentioned_at < ${we}`, 'm.mentioned_at')}
       UNION
       ${part(`m.mentioned_at >= ${ws} AND m.mentioned_at < ${mid}`, 'm.mentioned_at DESC')}
       UNION
       ${part(`m.occurred_start >= ${mid} AND m.occurred_start < ${we}`, 'm.occurred_start')}
       UNION
       ${part(`${end} >= ${ws} AND ${end} < ${mid}`, `${end} DESC`)}
       UNION
       (SELECT ${cols} FROM (
          SELECT * FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2
            AND ${end} >= ${mid} AND ${end} < ${mid} + interval '${LONG_SPAN}'
          ORDER BY ${end} LIMIT $3 * ${TEMPORAL_SCAN}) m
        WHERE m.occurred_start < ${mid}${where} LIMIT $3)
       UNION
       (SELECT ${cols} FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2
         AND m.occurred_end - m.occurred_start > interval '${LONG_SPAN}'
         AND m.occurred_start < ${mid} AND m.occurred_end >= ${mid}${where} LIMIT $3)),
     c AS (
       SELECT m.id, m.seq, least(
         CASE WHEN m.occurred_start < w.we AND coalesce(m.occurred_end, m.occurred_start) >= w.ws THEN
           CASE WHEN m.occurred_start <= w.mid AND coalesce(m.occurred_end, m.occurred_start) >= w.mid THEN 0
             ELSE least(abs(extract(epoch FROM m.occurred_start - w.mid)),
                        abs(extract(epoch FROM coalesce(m.occurred_end, m.occurred_start) - w.mid))) END
         END,
         CASE WHEN m.mentioned_at >= w.ws AND m.mentioned_at < w.we
           THEN abs(extract(epoch FROM m.mentioned_at - w.mid)) END) / w.half AS d
       FROM inside m CROSS JOIN w)
     SELECT id::text AS id, (1 - 0.5 * least(d, 1))::float8 AS score, d::float8 AS k1, seq AS k2 FROM c
     ORDER BY d, seq DESC LIMIT $3`;
}

/**
 * What a short walk found, completed by the exact search of the bank's newest rows: the best
 * `limit` of both, by similarity. The whole exact answer when the bank is no bigger than that.
 */
function completeShortWalk(walked: Hit[], recent: Hit[], limit: number): Hit[] {
  const seen = new Set(recent.map((h) => h.id));
  return [...recent, ...walked.filter((h) => !seen.has(h.id))]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

/** The keyword channel of `terms` from a bank's copy in the process (`keyword-memory-search.ts`). */
const keywordFromCopy = (copy: KeywordIndex, terms: string[], filter: MemoryFilter, limit: number) =>
  searchKeywordIndex(
    copy,
    terms,
    { limit, candidates: Math.max(limit, KEYWORD_CANDIDATES), driverPostings: DRIVER_POSTINGS, k1: K1, b: B },
    filter,
  ).hits;

/** One channel's query alone, best first. */
const hitsOf = (db: Queryable, sql: string, params: unknown[]) =>
  db.query<Hit>(`SELECT id, score FROM (${sql}) c ORDER BY k1, k2 DESC`, params);

const CHANNELS = ['semantic', 'keyword', 'temporal', 'graph'] as const;

/** Vectors of a size the vector index holds (others are searched exactly). */
const indexable = (vector: Float32Array) => (HNSW_DIMENSIONS as readonly number[]).includes(vector.length);

/**
 * Whether a Recall's channels may end its snapshot (`lastSearchChannels`): not when a filter
 * narrows the memories (types, tags, a document) of a bank walked through the vector index,
 * whose walk may then come back short and need a statement more; those would pay for their
 * channels twice, so they go to one snapshot at once.
 */
export const mayEndWithChannels = (q: ChannelQuery, filter: MemoryFilter): boolean =>
  !(
    q.vector &&
    indexable(q.vector) &&
    (q.expectedSize ?? 0) > EXACT_SEARCH_LIMIT &&
    (filter.types?.length || filter.tags?.length || filter.documentId !== undefined)
  );

/** What one bank's channels are asked for. */
interface Asked {
  projectId: string;
  bankId: string;
  q: ChannelQuery;
  filter: MemoryFilter;
  limit: number;
}

/**
 * Retrieval channels as SQL. Scores: cosine similarity, normalised BM25, window closeness.
 * `keywords`: copies of banks' postings in the process (`keyword-memory.ts`), which answer the
 * keyword channel of `searchChannels` when one is of the snapshot's version.
 */
export function searchQueries(db: Db, keywords: KeywordMemory | null = null): SearchStore {
  let checkedAt = 0;
  let visibilityChecked = false;
  const exactSearch = (
    q: Queryable,
    projectId: string,
    bankId: string,
    vector: Float32Array,
    filter: MemoryFilter,
    limit: number,
    sql: typeof recentExactVectorSql = exactVectorSql,
  ) => {
    const params: unknown[] = [projectId, bankId, limit];
    const where = filterClauses(filter, params);
    return hitsOf(q, sql(params, vector, where, filter), params);
  };

  /**
   * Runs `search` with the vector index walk set up when the bank is past the exact-search size
   * (given the bank's `size`): one statement reads the bank's size and sets the walk up (each statement costs
   * ~0.4 ms on the embedded engine). Iterative scan: the walk goes on until enough rows pass the
   * bank filter, instead of stopping after ef_search candidates of which few are this bank's.
   * A custom plan when the bank has an HNSW index of its own (`bankIndexName`): a generic plan of
   * the prepared statement cannot use a bank's partial index. Otherwise PostgreSQL's default,
   * which keeps a generic plan once it costs no more than the custom ones: planning the channels
   * statement afresh was ~28% of a Recall's database CPU (docs/recall.md). The walk gives up
   * after `scanTuples`; a filter passing few memories, or a bank that is a sliver of a huge
   * table, can then come back short, and is completed by an exact search of the bank's newest
   * rows (`completeShortWalk`).
   */
  const withVectorWalk = <T>(
    projectId: string,
    bankId: string,
    dims: number,
    limit: number,
    search: (tx: Queryable, size: number) => Promise<T>,
  ): Promise<T> =>
    db.transaction(async (tx) => search(tx, (await walkSetUp(tx, projectId, bankId, dims, limit)).n));
  /** The statement of `withVectorWalk` and `openBankSearch`: the bank's row, the walk set up. */
  const walkSetUp = async (tx: Queryable, projectId: string, bankId: string, dims: number, limit: number) => {
    const rows = await tx.query<EncryptionRow & { n: number; version: string }>(
      `SELECT b.memory_count AS n, ${BANK_VERSION} AS version, ${ENCRYPTION_COLUMNS},
         set_config('hnsw.iterative_scan', 'relaxed_order', true),
         set_config('hnsw.ef_search', $3, true), set_config('hnsw.max_scan_tuples', $4, true),
         set_config('plan_cache_mode', CASE WHEN to_regclass($5) IS NULL THEN 'auto' ELSE 'force_custom_plan' END, true)
       FROM banks b LEFT JOIN bank_keys k ON k.project_id = b.project_id AND k.bank_id = b.id
       WHERE b.project_id = $1 AND b.id = $2`,
      [
        projectId,
        bankId,
        String(efSearch(limit)),
        String(scanTuples(limit)),
        bankIndexName(projectId, bankId, dims),
      ],
    );
    const r = rows[0];
    return { n: r?.n ?? 0, encryption: r ? encryptionOf(r) : null, version: r?.version ?? null };
  };
  const short = (hits: Hit[], limit: number, size: number) => hits.length < Math.min(limit, size);

  const keywordSearch = (
    q: Queryable,
    projectId: string,
    bankId: string,
    terms: string[],
    filter: MemoryFilter,
    limit: number,
  ) => {
    const params: unknown[] = [projectId, bankId, limit];
    return hitsOf(q, keywordSql(params, terms, filter, limit), params);
  };

  /**
   * Every channel of `q` in one statement, sent at once, for a bank of `size` memories (its vectors
   * searched through the index past the exact-search size); the keyword channel from `copy` when
   * one is given, searched in the process while the database runs the others.
   */
  const channels = async (
    tx: Queryable,
    { projectId, bankId, q, filter, limit }: Asked,
    size: number,
    copy: KeywordIndex | null,
  ): Promise<ChannelHits> => {
    const indexed = size > EXACT_SEARCH_LIMIT;
    const params: unknown[] = [projectId, bankId, limit];
    const terms = [...new Set(q.terms)];
    const vector = q.vector;
    // The keyword part takes the filter as arguments: without another part the clauses'
    // parameters would go unused, and PostgreSQL refuses a parameter it cannot type.
    const where = vector || q.window || q.graph ? filterClauses(filter, params) : '';
    const parts = [
      vector ? (indexed ? indexedVectorSql : exactVectorSql)(params, vector, where) : null,
      terms.length && !copy ? keywordSql(params, terms, filter, limit) : null,
      q.window ? temporalSql(params, q.window, where) : null,
      q.graph ? graphChannelSql(params, q.graph.probes, q.graph.depth, where) : null,
    ].flatMap((sql, ch) => (sql ? [`SELECT ${ch} AS ch, id, score, k1, k2 FROM (${sql}) c${ch}`] : []));
    const hits: ChannelHits = { semantic: [], keyword: [], temporal: [], graph: [] };
    // A row per channel, its hits in two comma-separated lists: hundreds of rows of three
    // fields cost the drivers more to decode than two values (each field a buffer and a
    // string on PGlite), and the drivers' array parsers, a character at a time, ~7% of a
    // Recall's Node CPU more than a split. A float8's text is the shortest that reads back
    // exactly, so the scores are the numbers an array gave.
    const pending = parts.length
      ? tx.query<{ ch: number; ids: string; scores: string }>(
          `SELECT ch, string_agg(id, ',' ORDER BY k1, k2 DESC) AS ids,
             string_agg(score::float8::text, ',' ORDER BY k1, k2 DESC) AS scores
           FROM (${parts.join(' UNION ALL ')}) hits GROUP BY ch`,
          params,
        )
      : null;
    // Searched while the database runs the other channels.
    if (copy) hits.keyword = keywordFromCopy(copy, terms, filter, limit);
    if (!pending) return hits;
    for (const r of await pending) {
      const scores = r.scores.split(',');
      hits[CHANNELS[r.ch]!] = r.ids.split(',').map((id, i) => ({ id, score: Number(scores[i]) }));
    }
    return hits;
  };

  /** A walk of the index that came back short (see `withVectorWalk`), completed by the bank's newest rows. */
  const completeShort = async (
    tx: Queryable,
    { projectId, bankId, q, filter, limit }: Asked,
    size: number,
    hits: ChannelHits,
  ): Promise<ChannelHits> => {
    if (q.vector && size > EXACT_SEARCH_LIMIT && short(hits.semantic, limit, size))
      hits.semantic = completeShortWalk(
        hits.semantic,
        await exactSearch(tx, projectId, bankId, q.vector, filter, limit, recentExactVectorSql),
        limit,
      );
    return hits;
  };

  const store: SearchStore = {
    async maintainStatistics() {
      // Without statistics the planner guesses, and guesses badly: a keyword query ten times
      // slower at a few hundred memories, and the foreign-key checks of a Retain scanning the
      // whole bank per row (a 500-item Retain into a 6k bank: 4.6 s instead of 0.1 s). PGlite has
      // no autovacuum; PostgreSQL's reaches a fresh, fast-growing table only after minutes. So:
      // ANALYZE when the memories table has grown by a quarter since the last one (or never had
      // one); pg_class keeps the count. At most once per STATISTICS_CHECK_MS per process. On
      // PGlite also VACUUM, which nothing else runs there: it keeps the visibility map that lets
      // keyword search read postings from the index alone (migration 11), and it only visits
      // pages changed since the last one. It also runs, once per process, when most postings
      // pages are not marked all-visible (a data directory upgraded to migration 11, or loaded
      // in bulk).
      if (Date.now() - checkedAt < STATISTICS_CHECK_MS) return;
      checkedAt = Date.now();
      const rows = await db.query<{
        analyzed: number;
        now: number;
        pages: number;
        visible: number;
        links_grown: boolean;
      }>(
        `SELECT (SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass)::float8 AS analyzed,
                (SELECT coalesce(sum(memory_count), 0) FROM banks)::float8 AS now,
                c.relpages::float8 AS pages, c.relallvisible::float8 AS visible,
                -- Entities and their links grow ~100 rows per memory in a Retain that names many:
                -- stale statistics there made every foreign-key check and entity lookup a scan.
                EXISTS (SELECT 1 FROM pg_class l WHERE l.oid IN ('entities'::regclass, 'memory_entities'::regclass)
                  AND pg_relation_size(l.oid) / current_setting('block_size')::int > 1.25 * l.relpages + 10) AS links_grown
         FROM pg_class c WHERE c.oid = 'memory_terms'::regclass`,
      );
      const { analyzed = 0, now = 0, pages = 0, visible = 0, links_grown = false } = rows[0] ?? {};
      const grown = (now > 0 && (analyzed < 0 || now > 1.25 * analyzed + 100)) || links_grown;
      const invisible = !visibilityChecked && pages > 100 && visible < pages / 2;
      if (db.engine === 'pglite' && (grown || invisible)) {
        visibilityChecked ||= invisible;
        // A table per statement: the embedded engine runs one statement at a time, in the
        // event loop's thread, and the whole database in one went on for seconds on a big one.
        // And a column per statement on a big table: statistics of each column cost a sort of
        // its sample (30,000 rows), and all of one 40,000-entity table took 100 ms in one.
        const tables = await db.query<{ name: string; columns: string[] | null }>(
          `SELECT quote_ident(c.relname) AS name,
             CASE WHEN pg_relation_size(c.oid) / current_setting('block_size')::int > $1 THEN
               (SELECT array_agg(quote_ident(a.attname) ORDER BY a.attnum) FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) END AS columns
           FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace ORDER BY c.relname`,
          [ANALYZE_BY_COLUMN_PAGES],
        );
        for (const t of tables) {
          if (!t.columns) await db.exec(`VACUUM (ANALYZE) ${t.name}`);
          else {
            await db.exec(`VACUUM ${t.name}`);
            // With a smaller sample than PostgreSQL's default (300 rows × the target): one
            // column of a 60,000-row table took up to 71 ms of CPU at 30,000 rows.
            for (const c of t.columns)
              await db.transaction(async (tx) => {
                await tx.exec(`SET LOCAL default_statistics_target = ${BIG_TABLE_STATISTICS_TARGET}`);
                await tx.exec(`ANALYZE ${t.name} (${c})`);
              });
          }
        }
      } else if (grown) await db.exec('ANALYZE');
    },

    async semanticSearch(projectId, bankId, vector, filter, limit) {
      if (!indexable(vector)) return exactSearch(db, projectId, bankId, vector, filter, limit);
      return withVectorWalk(projectId, bankId, vector.length, limit, async (tx, size) => {
        if (size <= EXACT_SEARCH_LIMIT) return exactSearch(tx, projectId, bankId, vector, filter, limit);
        const params: unknown[] = [projectId, bankId, limit];
        const hits = await hitsOf(
          tx,
          indexedVectorSql(params, vector, filterClauses(filter, params)),
          params,
        );
        if (!short(hits, limit, size)) return hits;
        const recent = await exactSearch(tx, projectId, bankId, vector, filter, limit, recentExactVectorSql);
        return completeShortWalk(hits, recent, limit);
      });
    },

    async keywordSearch(projectId, bankId, terms, filter, limit) {
      const unique = [...new Set(terms)];
      return unique.length ? keywordSearch(db, projectId, bankId, unique, filter, limit) : [];
    },

    async temporalSearch(projectId, bankId, window, filter, limit) {
      const params: unknown[] = [projectId, bankId, limit];
      return hitsOf(db, temporalSql(params, window, filterClauses(filter, params)), params);
    },

    async openBankSearch(projectId, bankId, dims, limit) {
      const { n, encryption, version } = await walkSetUp(db, projectId, bankId, dims, limit);
      return { size: n, encryption, walk: { dims, limit }, version };
    },

    async searchChannels(projectId, bankId, q, filter, limit, opened) {
      const terms = [...new Set(q.terms)];
      // The keyword channel from the bank's copy in the process, when it is of this snapshot's version.
      const copy =
        keywords && terms.length && opened?.version
          ? keywords.lookup(projectId, bankId, opened.version)
          : null;
      const asked = { projectId, bankId, q, filter, limit };
      const run = async (tx: Queryable, size: number) =>
        completeShort(tx, asked, size, await channels(tx, asked, size, copy));
      if (!q.vector || !indexable(q.vector)) return run(db, 0);
      const walk = opened?.walk;
      if (walk?.dims === q.vector.length && walk.limit === limit) return run(db, opened!.size);
      return withVectorWalk(projectId, bankId, q.vector.length, limit, run);
    },

    async openSearchChannels(projectId, bankId, q, filter, limit, expectedSize, last = false) {
      const dims = q.vector?.length ?? 0;
      const terms = [...new Set(q.terms)];
      const vectorSize = (size: number) => (q.vector && indexable(q.vector) ? size : 0);
      // Written for the bank as last seen (its size, its current copy), sent with the set-up.
      const guess = keywords && terms.length ? keywords.current(projectId, bankId) : null;
      const setUp = walkSetUp(db, projectId, bankId, dims, limit);
      const ending = last ? db.queryLast : undefined;
      const tx: Queryable = ending ? { query: ending, exec: db.exec } : db;
      const asked = { projectId, bankId, q, filter, limit };
      const searched = channels(tx, asked, vectorSize(expectedSize), guess);
      const [set, hits] = await Promise.all([setUp, searched]);
      const opened: BankSearch = {
        size: set.n,
        encryption: set.encryption,
        walk: { dims, limit },
        version: set.version,
      };
      const size = vectorSize(set.n);
      // The bank crossed the exact-search size since: its vectors searched the other way, as `searchChannels` would.
      if (vectorSize(expectedSize) > EXACT_SEARCH_LIMIT !== size > EXACT_SEARCH_LIMIT)
        return {
          opened,
          hits: last ? null : await store.searchChannels(projectId, bankId, q, filter, limit, opened),
        };
      const copy =
        keywords && terms.length && set.version ? keywords.lookup(projectId, bankId, set.version) : null;
      // The copy guessed is not of this snapshot's version (the bank was written since).
      const stale = guess !== null && copy !== guess;
      if (last)
        return {
          opened,
          hits: stale || (size > EXACT_SEARCH_LIMIT && short(hits.semantic, limit, size)) ? null : hits,
        };
      // The keyword channel again, from a copy loaded meanwhile or in SQL.
      if (stale)
        hits.keyword = copy
          ? keywordFromCopy(copy, terms, filter, limit)
          : await keywordSearch(db, projectId, bankId, terms, filter, limit);
      return { opened, hits: await completeShort(db, asked, size, hits) };
    },

    async lastSearchChannels(projectId, bankId, q, filter, limit) {
      if (!mayEndWithChannels(q, filter)) return null;
      const { opened, hits } = await store.openSearchChannels(
        projectId,
        bankId,
        q,
        filter,
        limit,
        q.expectedSize ?? 0,
        true,
      );
      return hits && opened.version && !opened.encryption?.key ? { ...hits, version: opened.version } : null;
    },
  };
  return store;
}
