import { type ConfigInput, loadConfig } from '../config/load.js';
import { cliIo } from './io.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/** Opens (and migrates) the store the configuration names, for commands that work on the database directly. */
export function openConfiguredStore(input: ConfigInput): Promise<Store> {
  const config = loadConfig(input, cliIo().env);
  return openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    poolSize: 2,
    embeddedCacheMb: config.embeddedCacheMb,
  });
}
