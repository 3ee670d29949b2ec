import {
  BadRequestError,
  type BankConfigUpdates,
  type Mnemo,
  NotFoundError,
  PermissionDeniedError,
} from '../../../packages/client/src/index.js';
import { type BankLine, type DirectiveLine, isConsolidatedObservation } from './bank-file.js';

type Log = (message: string) => void;

/** Whether the bank exists. */
async function bankExists(client: Mnemo, bank: string): Promise<boolean> {
  try {
    await client.banks.get(bank);
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

/** The id of the bank's newest memory: null for an empty or missing bank. */
export async function newestMemoryId(client: Mnemo, bank: string): Promise<string | null> {
  try {
    return (await client.memories.list(bank, { limit: 1 })).items[0]?.id ?? null;
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

/**
 * Whether anything was retained after the memory `marker` (null: the bank was empty). The
 * observations that consolidation adds on its own do not count. Undefined when the marker is
 * gone, so nothing can be told. Assumes nobody else retains into the bank meanwhile.
 */
export async function retainedSince(
  client: Mnemo,
  bank: string,
  marker: string | null,
): Promise<boolean | undefined> {
  try {
    for await (const m of client.memories.list(bank, { limit: 100 })) {
      if (m.id === marker) return false;
      if (!isConsolidatedObservation(m)) return true;
    }
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
  return marker === null ? false : undefined;
}

/** Runs an admin-only step; a key without `admin` skips it with a warning (the memories matter more). */
async function adminStep(what: string, log: Log, fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    if (!(err instanceof PermissionDeniedError)) throw err;
    log(`warning: ${what} not applied (the key needs scope '${err.requiredScope ?? 'admin'}')`);
    return false;
  }
}

/** PATCHes the config, leaving out keys this server refuses (e.g. `encryption: managed` without a master key). */
async function patchConfig(client: Mnemo, bank: string, updates: Record<string, unknown>, log: Log) {
  try {
    await client.banks.config.update(bank, updates as BankConfigUpdates);
  } catch (err) {
    const refused =
      err instanceof BadRequestError ? (err.details ?? []).map((d) => d.path.replace(/^updates\./, '')) : [];
    if (!refused.length) throw err;
    log(`warning: this server refused config ${refused.join(', ')} (${(err as Error).message})`);
    const rest = Object.fromEntries(Object.entries(updates).filter(([k]) => !refused.includes(k)));
    if (Object.keys(rest).length) await client.banks.config.update(bank, rest as BankConfigUpdates);
  }
}

/**
 * Gives the target bank the export's identity, config and directives, before its memories.
 * Intake stays verbatim while importing: exported memories are already the extracted facts with
 * their entities listed, so another extraction or automatic entity pass would change them.
 * Safe to repeat (directives already there are not added twice). Returns false when the bank
 * does not exist and cannot be created here (the first batch then creates it).
 */
export async function prepareBank(
  client: Mnemo,
  bank: string,
  line: BankLine,
  directives: DirectiveLine[],
  log: Log,
): Promise<boolean> {
  const identity = { name: line.name, mission: line.mission };
  if (!(await bankExists(client, bank))) {
    if (!(await adminStep('bank creation', log, () => client.banks.upsert(bank, identity)))) return false;
  } else if (line.name !== null || line.mission !== null) {
    await adminStep('bank name and mission', log, () => client.banks.update(bank, identity));
  }
  const intake = { ...line.config, retain_extraction_mode: 'chunks', retain_auto_entities: false };
  await adminStep('bank config', log, () => patchConfig(client, bank, intake, log));
  if (directives.length) {
    await adminStep('directives', log, async () => {
      const have = new Set((await client.directives.list(bank)).map((d) => `${d.name}\n${d.text}`));
      for (const { kind: _kind, ...d } of directives) {
        if (!have.has(`${d.name}\n${d.text}`)) await client.directives.create(bank, d);
      }
    });
  }
  return true;
}

/** After the import: the exported intake settings (or the defaults when the export had none). */
export function restoreIntakeConfig(client: Mnemo, bank: string, line: BankLine, log: Log) {
  const intake = {
    retain_extraction_mode: line.config.retain_extraction_mode ?? null,
    retain_auto_entities: line.config.retain_auto_entities ?? null,
  };
  return adminStep('bank config', log, () => patchConfig(client, bank, intake, log));
}
