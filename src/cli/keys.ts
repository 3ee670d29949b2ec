import type { Command } from 'commander';
import { createKey, keyView, requireProject, revokeKey } from '../core/projects.js';
import { SCOPES, type Scope } from '../core/types.js';
import { invalid } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { addConfigOptions, configOptions } from './options.js';
import { openConfiguredStore } from './store.js';

/** Key commands need only the store; the embedder and model are never loaded. */
async function withServices<T>(
  opts: Record<string, unknown>,
  fn: (s: Pick<Services, 'store' | 'now'>) => Promise<T>,
): Promise<T> {
  const store = await openConfiguredStore(configOptions(opts));
  const s = { store, now: () => new Date() };
  try {
    return await fn(s);
  } finally {
    await store.close();
  }
}

function parseScopes(list: string): Scope[] {
  const scopes = list
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const sc of scopes) {
    if (!(SCOPES as readonly string[]).includes(sc))
      throw invalid('scopes', `unknown scope '${sc}' (known: ${SCOPES.join(', ')})`);
  }
  if (scopes.length === 0) throw invalid('scopes', 'at least one scope is needed');
  return scopes as Scope[];
}

/** `--banks a,user-42/*`: the banks a key is limited to (validated by createKey). */
function parseBanks(list: string | undefined): string[] | null {
  if (list === undefined) return null;
  return list
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** `mnemo keys create|list|revoke`, straight on the database. */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage project API keys');
  addConfigOptions(
    keys
      .command('create')
      .description('mint an API key (printed once)')
      .option('--project <id>', 'project id', 'default')
      .requiredOption('--scopes <list>', `comma-separated: ${SCOPES.join(',')}`)
      .option('--name <name>', 'a label for the key', 'cli')
      .option(
        '--banks <list>',
        'comma-separated bank ids or prefixes ending in * (e.g. user-42/*): the key reaches only these',
      )
      .option('--expires-at <iso>', 'expiry (ISO 8601)'),
  ).action(async (opts) => {
    const scopes = parseScopes(opts.scopes);
    const expires = opts.expiresAt ? new Date(opts.expiresAt) : null;
    if (expires && Number.isNaN(expires.getTime())) throw invalid('expires_at', 'not an ISO 8601 date-time');
    const key = await withServices(opts, (s) =>
      createKey(s, opts.project, {
        name: opts.name,
        scopes,
        banks: parseBanks(opts.banks),
        expires_at: expires,
      }),
    );
    console.log(key.key);
    console.error(
      `key ${key.id} for project ${key.project_id} with scopes ${key.scopes.join(',')}${key.banks ? ` limited to banks ${key.banks.join(',')}` : ''} — store it now, it is not shown again`,
    );
  });
  addConfigOptions(
    keys
      .command('list')
      .description('list keys (never the secrets)')
      .option('--project <id>', 'project id', 'default'),
  ).action(async (opts) => {
    const rows = await withServices(opts, async (s) => {
      await requireProject(s, opts.project);
      return (await s.store.listApiKeys(opts.project)).map(keyView);
    });
    console.table(
      rows.map((k) => ({
        id: k.id,
        name: k.name,
        scopes: k.scopes.join(','),
        banks: k.banks?.join(',') ?? '*',
        created: k.created_at.toISOString(),
        expires: k.expires_at?.toISOString() ?? '',
        revoked: k.revoked_at?.toISOString() ?? '',
      })),
    );
  });
  addConfigOptions(
    keys
      .command('revoke')
      .description('revoke a key at once')
      .argument('<key-id>', 'the key id (as keys list shows it)')
      .option('--project <id>', 'project id', 'default'),
  ).action(async (keyId: string, opts) => {
    await withServices(opts, (s) => revokeKey(s, opts.project, keyId));
    console.log(`revoked ${keyId}`);
  });
}
