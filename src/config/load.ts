import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { isLoopbackHost } from '../net/loopback.js';

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

/** Every setting, with its environment variable and default. Explicit options win over env. */
const ConfigSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(8888),
  host: z.string().min(1).default('127.0.0.1'),
  dataDir: z.string().min(1).default('./.mnemo'),
  databaseUrl: optionalString,
  databasePoolSize: z.coerce.number().int().min(1).max(200).default(10),
  /** PGlite's shared buffers: the embedded engine's page cache, reserved at start, resident as it fills. */
  embeddedCacheMb: z.coerce.number().int().min(16).max(1024).default(256),
  adminToken: optionalString,
  insecureNoAuth: bool.default(false),
  masterKey: optionalString,
  llmProvider: z.enum(['openai', 'anthropic', 'none']).default('none'),
  llmBaseUrl: optionalString,
  llmModel: optionalString,
  llmApiKey: optionalString,
  embeddingsUrl: optionalString,
  embeddingsModel: optionalString,
  embeddingsApiKey: optionalString,
  embeddingsDimensions: z.coerce.number().int().positive().optional(),
  cacheDir: z
    .string()
    .min(1)
    .default(join(homedir(), '.cache', 'mnemo')),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  corsOrigins: optionalString,
  /** Comma-separated host names served besides loopback (behind a proxy, or a LAN name). */
  allowedHosts: optionalString,
  worker: bool.default(true),
  recallCacheSize: z.coerce.number().int().min(0).max(1_000_000).default(1000),
  recallCacheTtlSeconds: z.coerce.number().int().min(1).max(86_400).default(30),
  /** Decrypted vectors of encrypted banks kept per process for their in-memory search (MB). */
  vectorCacheMb: z.coerce.number().int().min(0).max(1_000_000).default(256),
  defaultRequestsPerMinute: limit,
  defaultRequestsPerMinutePerKey: limit,
  defaultRetainedItemsPerDay: limit,
  defaultStoredMemories: limit,
  // Cost budgets per project (docs/security.md#cost-budgets): generous enough that no normal
  // workload meets them, finite so that a runaway or hostile client is stopped.
  defaultRetainedItemsPerMinute: budget(10_000),
  defaultCharactersPerMinute: budget(20_000_000),
  defaultCharactersPerDay: budget(1_000_000_000),
  defaultEntitiesPerMinute: budget(500_000),
  defaultEntitiesPerDay: budget(20_000_000),
  defaultModelCallsPerMinute: budget(1_000),
  defaultModelCallsPerDay: budget(200_000),
  defaultModelTokensPerMinute: budget(4_000_000),
  defaultModelTokensPerDay: budget(200_000_000),
  // About 1,000 default Recalls a second (more than one server answers) and a tenth of that
  // sustained over a day: a backstop, not a plan.
  defaultRecallUnitsPerMinute: budget(120_000),
  defaultRecallUnitsPerDay: budget(20_000_000),
});

export type Config = Readonly<z.infer<typeof ConfigSchema>>;
export type ConfigInput = Partial<z.input<typeof ConfigSchema>>;

/** camelCase option -> MNEMO_SNAKE_CASE variable. */
export function envName(key: string): string {
  return `MNEMO_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

export const CONFIG_KEYS = Object.keys(ConfigSchema.shape) as (keyof Config)[];

/**
 * Reads the configuration once: explicit option > MNEMO_* environment > default.
 * Throws an Error naming every bad setting by its variable.
 */
export function loadConfig(options: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    const fromEnv = env[envName(key)];
    const value = (options as Record<string, unknown>)[key] ?? fromEnv;
    if (value !== undefined) raw[key] = value;
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${envName(String(i.path[0]))}: ${i.message}`);
    throw new Error(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const cfg = parsed.data;
  return Object.freeze({ ...cfg, dataDir: resolve(cfg.dataDir) });
}

/** True when the host only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return isLoopbackHost(host);
}
