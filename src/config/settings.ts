import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no', ''])])
  .transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));
const limit = z
  .union([z.coerce.number().int().positive(), z.literal('').transform(() => null)])
  .nullable()
  .optional();
/** A cost budget's default: finite unless set to '' (unlimited). */
const budget = (fallback: number) =>
  z
    .union([z.coerce.number().int().positive(), z.literal('').transform(() => null)])
    .nullable()
    .default(fallback);

/** One setting: how its value is read and checked, and what it is for (docs, `--help`). */
export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** What it does, one line of plain text (backticks allowed). */
  readonly doc: string;
  /** How the docs show the default when the schema's default is not it (a home directory, or no value). */
  readonly shownDefault?: string;
  /** The docs page (and anchor) that says more. */
  readonly see?: string;
}

const setting = <S extends z.ZodType>(
  schema: S,
  doc: string,
  more: { shownDefault?: string; see?: string } = {},
): Setting<S> => ({ schema, doc, ...more });

const costBudget = (fallback: number, what: string) =>
  setting(budget(fallback), `cost budget of each project: ${what}; empty = unlimited`, {
    see: 'security.md#cost-budgets',
  });

/**
 * Every setting of the server, in one place: `loadConfig` parses with these schemas, the CLI
 * adds a flag for each, and `npm run docs` writes the table of docs/configuration.md from them.
 * The key `fooBar` is read from `MNEMO_FOO_BAR` and set by `--foo-bar`.
 */
export const SETTINGS = {
  port: setting(z.coerce.number().int().min(0).max(65535).default(8888), 'listening port'),
  host: setting(
    z.string().min(1).default('127.0.0.1'),
    'listening address; beyond loopback needs `MNEMO_ADMIN_TOKEN` or `--insecure-no-auth`',
  ),
  dataDir: setting(
    z.string().min(1).default('./.mnemo'),
    'embedded database directory (`pgdata` inside); locked by one process',
  ),
  databaseUrl: setting(
    optionalString,
    'PostgreSQL URL (pgvector required); when set the embedded engine is not used',
  ),
  databasePoolSize: setting(
    z.coerce.number().int().min(1).max(200).default(10),
    'connections per process (PostgreSQL), 1–200',
  ),
  /** PGlite's shared buffers: the embedded engine's page cache, reserved at start, resident as it fills. */
  embeddedCacheMb: setting(
    z.coerce.number().int().min(16).max(1024).default(256),
    "the embedded engine's page cache in MB (PGlite shared buffers, 16–1024), reserved at start and resident as it fills with data; raise it for banks well past 100k memories, lower it on a small machine",
    { see: 'recall.md' },
  ),
  /** The embedded engine on a thread of its own (src/store/pglite-thread.ts). */
  embeddedThread: setting(
    bool.default(true),
    'run the embedded engine on a thread of its own, beside the one serving HTTP (`mnemo serve`); `false` runs it on the main thread',
    { see: 'recall.md' },
  ),
  adminToken: setting(optionalString, 'operator token for `/v1/default` and project/key management'),
  insecureNoAuth: setting(bool.default(false), 'allow an open `/v1/default` beyond loopback'),
  masterKey: setting(
    optionalString,
    'master key for managed encryption: 32 random bytes, base64 (`openssl rand -base64 32`) or 64 hex digits',
    { see: 'security.md#managed-encryption-at-rest' },
  ),
  llmProvider: setting(
    z.enum(['openai', 'anthropic', 'none']).default('none'),
    '`openai` (OpenAI-compatible: OpenAI, Ollama, vLLM, LM Studio), `anthropic`, `none`',
  ),
  llmBaseUrl: setting(optionalString, 'e.g. `http://localhost:11434/v1` for Ollama', {
    shownDefault: "provider's",
  }),
  llmModel: setting(
    optionalString,
    'model name; needed for an OpenAI-compatible server other than OpenAI itself',
    { shownDefault: "provider's" },
  ),
  llmApiKey: setting(optionalString, 'provider key; needed for OpenAI itself and for Anthropic'),
  embeddingsUrl: setting(
    optionalString,
    'OpenAI-compatible embeddings endpoint; replaces the local embedder',
  ),
  embeddingsModel: setting(optionalString, 'embeddings model; needed with `MNEMO_EMBEDDINGS_URL`'),
  embeddingsApiKey: setting(optionalString, 'embeddings key'),
  embeddingsDimensions: setting(z.coerce.number().int().positive().optional(), 'vector size', {
    shownDefault: 'from the first answer',
  }),
  cacheDir: setting(
    z
      .string()
      .min(1)
      .default(join(homedir(), '.cache', 'mnemo')),
    "the local embedder's word vector cache, shared by every data directory and test run",
    { shownDefault: '`~/.cache/mnemo`' },
  ),
  logLevel: setting(
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  ),
  corsOrigins: setting(optionalString, 'comma-separated allowed origins', {
    shownDefault: '— (CORS off)',
  }),
  /** Comma-separated host names served besides loopback (behind a proxy, or a LAN name). */
  allowedHosts: setting(
    optionalString,
    "comma-separated `Host` names served besides loopback and the `--host` address, e.g. the proxy's public name; checked when there is no operator token, and when set even with one",
    { shownDefault: '—', see: 'security.md#host-and-origin-checks-dns-rebinding' },
  ),
  webhookAllowPrivate: setting(
    bool.default(false),
    'let webhooks reach private, loopback, link-local and metadata addresses (checked at creation and again at each delivery, after DNS)',
    { see: 'webhooks.md#security' },
  ),
  worker: setting(bool.default(true), 'run the operations worker inside `mnemo serve`'),
  recallCacheSize: setting(
    z.coerce.number().int().min(0).max(1_000_000).default(1000),
    'Recall answers kept per process while their bank is unchanged; `0` turns the cache off',
    { see: 'recall.md#answer-cache' },
  ),
  recallCacheTtlSeconds: setting(
    z.coerce.number().int().min(1).max(86_400).default(30),
    'the longest a cached Recall answer is served (queries without `query_timestamp` are read against the current time)',
  ),
  /** Decrypted vectors of encrypted banks kept per process for their in-memory search (MB). */
  vectorCacheMb: setting(
    z.coerce.number().int().min(0).max(1_000_000).default(256),
    'decrypted vectors of encrypted banks kept per process for their in-memory semantic search, in MB (least recently used banks go first)',
    { see: 'security.md#vectors-no-invertible-embedding-at-rest' },
  ),
  keywordCacheMb: setting(
    z.coerce.number().int().min(0).max(1_000_000).default(256),
    "banks' keyword postings kept per process so that Recall scores keyword matches in the process, in MB (least recently searched banks go first; a bank over it is searched in the database); `0` turns it off",
    { see: 'recall.md#keyword-search-in-the-process' },
  ),
  defaultRequestsPerMinute: setting(limit, "default project limit (a project's own setting wins)", {
    shownDefault: 'unlimited',
  }),
  defaultRequestsPerMinutePerKey: setting(limit, 'default limit of each API key', {
    shownDefault: 'unlimited',
  }),
  defaultRetainedItemsPerDay: setting(limit, 'default daily Retain quota', { shownDefault: 'unlimited' }),
  defaultStoredMemories: setting(limit, 'default stored-memories quota', { shownDefault: 'unlimited' }),
  // Cost budgets per project (docs/security.md#cost-budgets): generous enough that no normal
  // workload meets them, finite so that a runaway or hostile client is stopped.
  defaultRetainedItemsPerMinute: costBudget(10_000, 'items retained (sync or async)'),
  defaultCharactersPerMinute: costBudget(20_000_000, 'characters of retained content and context'),
  defaultCharactersPerDay: costBudget(1_000_000_000, 'characters, per UTC day'),
  defaultEntitiesPerMinute: costBudget(500_000, 'entities extracted or given by Retain'),
  defaultEntitiesPerDay: costBudget(20_000_000, 'entities, per UTC day'),
  defaultModelCallsPerMinute: costBudget(1_000, 'language model calls (extraction, consolidation, Reflect)'),
  defaultModelCallsPerDay: costBudget(200_000, 'language model calls, per UTC day'),
  defaultModelTokensPerMinute: costBudget(
    4_000_000,
    'language model tokens, input + output, as the provider reports them',
  ),
  defaultModelTokensPerDay: costBudget(200_000_000, 'language model tokens, per UTC day'),
  // About 1,000 default Recalls a second (more than one server answers) and a tenth of that
  // sustained over a day: a backstop, not a plan.
  defaultRecallUnitsPerMinute: costBudget(
    120_000,
    "Recall work, Reflect's retrieval included (a default Recall is 2 units)",
  ),
  defaultRecallUnitsPerDay: costBudget(20_000_000, 'Recall work, per UTC day'),
} as const satisfies Record<string, Setting>;

export type SettingKey = keyof typeof SETTINGS;

/** camelCase setting -> MNEMO_SNAKE_CASE variable. */
export function envName(key: string): string {
  return `MNEMO_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}
