import { bankConfigTable } from './bank-config.js';
import { cliReference } from './cli.js';
import { errorTable } from './errors.js';
import type { Region } from './regions.js';
import { scopeTable } from './scopes.js';
import { settingsTable } from './settings.js';

/** Every generated region of the docs, with the code it is written from. */
export const REGIONS: readonly Region[] = [
  { file: 'docs/api.md', name: 'error-codes', render: errorTable },
  { file: 'docs/api.md', name: 'scopes', render: scopeTable },
  { file: 'docs/api.md', name: 'bank-config', render: bankConfigTable },
  { file: 'docs/cli.md', name: 'cli-commands', render: cliReference },
  { file: 'docs/configuration.md', name: 'settings', render: settingsTable },
];
