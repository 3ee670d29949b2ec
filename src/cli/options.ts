import type { Command } from 'commander';
import { CONFIG_KEYS, type ConfigInput, envName } from '../config/load.js';
import { SETTINGS } from '../config/settings.js';

const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const BOOLEAN_KEYS = new Set(['insecureNoAuth', 'worker']);

/** Adds a flag for every setting (`--data-dir` for MNEMO_DATA_DIR, ...). */
export function addConfigOptions(cmd: Command): Command {
  for (const key of CONFIG_KEYS) {
    const help = `${SETTINGS[key].doc} (${envName(key)})`;
    if (BOOLEAN_KEYS.has(key)) {
      cmd.option(`--${kebab(key)}`, help);
      if (key === 'worker') cmd.option('--no-worker', 'do not run the operations worker in this process');
    } else {
      cmd.option(`--${kebab(key)} <value>`, help);
    }
  }
  return cmd;
}

/** The explicit options commander parsed, as config input. */
export function configOptions(opts: Record<string, unknown>): ConfigInput {
  const out: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) if (opts[key] !== undefined) out[key] = opts[key];
  return out as ConfigInput;
}
