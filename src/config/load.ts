import { resolve } from 'node:path';
import { z } from 'zod';
import { isLoopbackHost } from '../net/loopback.js';
import { envName, SETTINGS } from './settings.js';

export { envName };

type Shape = { [K in keyof typeof SETTINGS]: (typeof SETTINGS)[K]['schema'] };

/** Every setting (src/config/settings.ts), with its environment variable and default. Explicit options win over env. */
const ConfigSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([key, s]) => [key, s.schema])) as Shape,
);

export type Config = Readonly<z.infer<typeof ConfigSchema>>;
export type ConfigInput = Partial<z.input<typeof ConfigSchema>>;

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
