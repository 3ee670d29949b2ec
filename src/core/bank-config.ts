import type { z } from 'zod';
import { BANK_CONFIG_SCHEMA } from '../contract/bank-config.js';
import { AppError } from './errors.js';

// The schema is part of the wire contract (the API validates and documents bank config with it).
export { BANK_CONFIG_SCHEMA };

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
