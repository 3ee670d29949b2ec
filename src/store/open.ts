import type { Db, Queryable } from './db.js';
import { migrate, refuseNewerSchema } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPgliteThread } from './pglite-thread.js';
import { openPostgres } from './postgres.js';
import { auditQueries } from './sql/audit.js';
import { bankAuditQueries } from './sql/bank-audit.js';
import { llmRequestQueries } from './sql/llm-requests.js';
import { templateQueries } from './sql/templates.js';
import { bankQueries } from './sql/banks.js';
import { conversionQueries } from './sql/conversion.js';
import { encryptionQueries } from './sql/encryption.js';
import { evaluationQueries } from './sql/evaluations.js';
import { limitQueries } from './sql/limits.js';
import { directiveQueries } from './sql/directives.js';
import { documentQueries } from './sql/documents.js';
import { bankIndexQueries } from './sql/bank-index.js';
import { entityQueries } from './sql/entities.js';
import { graphQueries } from './sql/graph.js';
import { intakeQueries } from './sql/intake.js';
import { memoryQueries } from './sql/memories.js';
import { observationQueries } from './sql/observations.js';
import { operationQueries } from './sql/operations.js';
import { receiptQueries } from './sql/receipts.js';
import { searchQueries } from './sql/search.js';
import { statsQueries } from './sql/stats.js';
import { tenancyQueries } from './sql/tenancy.js';
import { transferArchiveQueries } from './sql/transfer-archives.js';
import { mentalModelQueries } from './sql/mental-models.js';
import { upkeepQueries } from './sql/upkeep.js';
import { curationQueries } from './sql/curation.js';
import { vectorQueries } from './sql/vectors.js';
import { webhookQueries } from './sql/webhooks.js';
import type { Store } from './store.js';
import { DEFAULT_KEYWORD_CACHE_MB, KeywordMemory } from './keyword-memory.js';

/** A transaction seen as a database: nested transactions run inline in it. */
function inTransaction(tx: Queryable, { engine, ownThread }: Db): Db {
  return {
    engine,
    ownThread,
    query: (sql, params) => tx.query(sql, params),
    exec: (sql) => tx.exec(sql),
    queryLast: tx.queryLast && ((sql, params) => tx.queryLast!(sql, params)),
    transaction: (fn) => fn(tx),
    ping: async () => {},
    close: async () => {},
  };
}

/** Options of `storeOver`. */
export interface StoreOptions {
  /** Bound of the banks' postings copied into the process for keyword search, in MB; 0: none. */
  keywordCacheMb?: number;
}

/** Builds the store over an open database connection. */
export function storeOver(db: Db, opts: StoreOptions = {}): Store {
  const mb = opts.keywordCacheMb ?? DEFAULT_KEYWORD_CACHE_MB;
  return storeWith(db, mb > 0 ? new KeywordMemory(db, mb * 2 ** 20) : null);
}

/** The store over `db`, its snapshots sharing the keyword copies `keywords`. */
export function storeWith(db: Db, keywords: KeywordMemory | null): Store {
  return {
    engine: db.engine,
    lost: db.lost,
    ping: () => db.ping(),
    close: () => db.close(),
    poolStats: () => db.poolStats?.() ?? null,
    engineMemory: async () => (await db.engineMemory?.()) ?? null,
    keywordMemoryStats: () => keywords?.stats() ?? null,
    readSnapshot: (fn) => db.transaction((tx) => fn(storeWith(inTransaction(tx, db), keywords)), 'snapshot'),
    ...intakeQueries(db),
    ...documentQueries(db),
    ...tenancyQueries(db),
    ...bankQueries(db),
    ...memoryQueries(db, keywords),
    ...searchQueries(db, keywords),
    ...bankIndexQueries(db),
    ...entityQueries(db),
    ...auditQueries(db),
    ...limitQueries(db),
    ...encryptionQueries(db),
    ...conversionQueries(db),
    ...operationQueries(db),
    ...directiveQueries(db),
    ...observationQueries(db),
    ...vectorQueries(db),
    ...evaluationQueries(db),
    ...statsQueries(db),
    ...graphQueries(db),
    ...upkeepQueries(db),
    ...curationQueries(db),
    ...webhookQueries(db),
    ...transferArchiveQueries(db),
    ...receiptQueries(db),
    ...mentalModelQueries(db),
    ...bankAuditQueries(db),
    ...llmRequestQueries(db),
    ...templateQueries(db),
  };
}

export interface OpenOptions {
  /** PostgreSQL URL; when set, the embedded engine is not used. */
  databaseUrl?: string;
  /** Embedded data directory; undefined means in memory. */
  dataDir?: string;
  poolSize?: number;
  /** The embedded engine's page cache in MB (PGlite's own default, 128, when absent). */
  embeddedCacheMb?: number;
  /** The embedded engine on a thread of its own (`openPgliteThread`) instead of this one. */
  embeddedThread?: boolean;
  /** Run pending migrations (default true). */
  migrate?: boolean;
  /** See `StoreOptions`. */
  keywordCacheMb?: number;
}

/** Opens the configured engine's database connection, neither migrating nor checking it. */
export function openDatabase(opts: OpenOptions): Promise<Db> {
  return opts.databaseUrl
    ? openPostgres(opts.databaseUrl, { poolSize: opts.poolSize })
    : (opts.embeddedThread ? openPgliteThread : openPglite)(opts.dataDir, { cacheMb: opts.embeddedCacheMb });
}

/**
 * Opens the configured engine, migrates it, and returns the store. A database migrated by a
 * newer mnemo is refused (SchemaTooNewError), with or without migrating.
 */
export async function openStore(opts: OpenOptions): Promise<Store> {
  const db = await openDatabase(opts);
  try {
    if (opts.migrate !== false) await migrate(db);
    else await refuseNewerSchema(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return storeOver(db, { keywordCacheMb: opts.keywordCacheMb });
}
