import { z } from 'zod';
import { AppError } from './errors.js';

const level = z.number().int().min(1).max(5);

/** Every bank config key with its type and default. The schema is the validation. */
export const BANK_CONFIG_SCHEMA = z.object({
  // Hindsight calls verbatim storage 'verbatim'; it is our 'chunks'.
  retain_extraction_mode: z
    .preprocess((v) => (v === 'verbatim' ? 'chunks' : v), z.enum(['concise', 'verbose', 'chunks', 'custom']))
    .default('chunks'),
  retain_auto_entities: z.boolean().default(false),
  retain_custom_instructions: z.string().max(4000).nullable().default(null),
  /** What extraction should look for, added to the built-in rules (Hindsight's retain_mission). */
  retain_mission: z.string().max(4000).nullable().default(null),
  /** Longest verbatim chunk in characters (about four per token); null: 4,000. */
  retain_chunk_size: z.number().int().min(200).max(100_000).nullable().default(null),
  /** The bank's mission for Reflect when no identity mission is set (Hindsight's reflect_mission). */
  reflect_mission: z.string().max(4000).nullable().default(null),
  enable_observations: z.boolean().default(true),
  observations_mission: z.string().max(4000).nullable().default(null),
  encryption: z.enum(['none', 'managed']).default('none'),
  enable_temporal_retrieval: z.boolean().default(true),
  enable_graph_retrieval: z.boolean().default(true),
  enable_reranking: z.boolean().default(true),
  disposition_skepticism: level.default(3),
  disposition_literalism: level.default(3),
  disposition_empathy: level.default(3),
  recall_default_budget: z.enum(['low', 'mid', 'high']).default('mid'),
});

export type BankConfig = z.infer<typeof BANK_CONFIG_SCHEMA>;
export const BANK_CONFIG_KEYS = Object.keys(BANK_CONFIG_SCHEMA.shape) as (keyof BankConfig)[];

/** The effective config: the bank's overrides over the defaults. */
export function effectiveConfig(overrides: Record<string, unknown>): BankConfig {
  const known = Object.fromEntries(
    Object.entries(overrides).filter(([k]) => Object.hasOwn(BANK_CONFIG_SCHEMA.shape, k)),
  );
  return BANK_CONFIG_SCHEMA.parse(known);
}

/**
 * Validates a PATCH `updates` object: unknown keys and bad values are one 400 naming each key.
 * `null` resets a key to its default.
 */
export function validateConfigUpdates(updates: Record<string, unknown>): Record<string, unknown> {
  const details: { path: string; message: string }[] = [];
  // No prototype, and only own members of the schema: a key named `constructor` or `toString`
  // is an unknown key like any other, never an inherited member.
  const clean: Record<string, unknown> = Object.create(null);
  const shape = BANK_CONFIG_SCHEMA.shape as Record<string, z.ZodType>;
  for (const [key, value] of Object.entries(updates)) {
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!field) {
      details.push({ path: `updates.${key}`, message: `unknown config key '${key}'` });
      continue;
    }
    if (value === null) {
      clean[key] = null;
      continue;
    }
    const r = field.safeParse(value);
    if (!r.success) {
      details.push({ path: `updates.${key}`, message: r.error.issues[0]?.message ?? 'invalid value' });
    } else clean[key] = r.data;
  }
  if (details.length) {
    throw new AppError(
      'validation_error',
      `invalid config: ${details.map((d) => d.path.slice(8)).join(', ')}`,
      {
        details,
      },
    );
  }
  return clean;
}
