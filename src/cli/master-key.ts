import type { Command } from 'commander';
import { rewrap } from '../core/crypto/keyring.js';
import { masterFingerprint, parseMasterKey } from '../core/crypto/master-key.js';
import { addConfigOptions, configOptions } from './options.js';
import { openConfiguredStore } from './store.js';

/**
 * `mnemo keys rotate-master --old <key> --new <key>`: re-wraps every bank's data key with the
 * new master key in one transaction (the data itself is not touched). Keys already wrapped by
 * the new one are left alone, so an interrupted rotation can simply be run again.
 */
export function registerMasterKeyCommand(program: Command): void {
  const keys = program.commands.find((c) => c.name() === 'keys') ?? program.command('keys');
  addConfigOptions(
    keys
      .command('rotate-master')
      .description('re-wrap the data keys of encrypted banks with a new master key (stop the servers first)')
      .requiredOption('--old <key>', 'the current master key (base64 or hex)')
      .requiredOption('--new <key>', 'the new master key (32 random bytes: openssl rand -base64 32)'),
  ).action(async (opts) => {
    const previous = parseMasterKey(opts.old);
    const next = parseMasterKey(opts.new);
    const store = await openConfiguredStore(configOptions(opts));
    try {
      const rows = await store.listBankKeys();
      const fingerprint = masterFingerprint(next);
      const updates: typeof rows = [];
      const refused: string[] = [];
      for (const r of rows) {
        try {
          const wrapped = rewrap(previous, next, r.project_id, r.bank_id, r.wrapped);
          if (wrapped !== null) updates.push({ ...r, wrapped, fingerprint });
        } catch {
          refused.push(`${r.project_id}/${r.bank_id} (wrapped by ${r.fingerprint})`);
        }
      }
      if (refused.length) {
        throw new Error(
          `neither key opens the data keys of ${refused.length} bank(s): ${refused.slice(0, 5).join(', ')}; nothing was changed`,
        );
      }
      await store.rewrapBankKeys(updates);
      console.log(
        `re-wrapped ${updates.length} data key(s) (${rows.length - updates.length} already used the new key); ` +
          `new master key fingerprint ${fingerprint}. Start the servers with the new MNEMO_MASTER_KEY.`,
      );
    } finally {
      await store.close();
    }
  });
}
