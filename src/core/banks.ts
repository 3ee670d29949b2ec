import { type BankConfig, effectiveConfig, validateConfigUpdates } from './bank-config.js';
import { AppError, notFound } from './errors.js';
import { checkId, orgSpaceOf } from './ids.js';
import type { Deps, Services } from './services.js';
import type { BankStore } from '../store/store.js';
import type { Bank } from './types.js';

/** The bank's vectors come from another embedder than the server's: not comparable to its queries. */
export const staleVectors = (s: Pick<Services, 'embedder'>, bank: Bank) =>
  bank.embedder !== null && bank.embedder !== s.embedder.id;

/** The bank, or 404. A bank of another project is simply not found. */
export async function requireBank(s: Deps<BankStore>, projectId: string, bankId: string): Promise<Bank> {
  checkId('bank id', bankId, 'bank');
  const bank = await s.store.getBank(projectId, bankId);
  if (!bank) throw notFound(`bank '${bankId}'`);
  return bank;
}

/**
 * The bank for a write, created on first use. `space` attaches a new bank to that space;
 * `__org__:{space}` is the space's org bank and needs the space to exist. Callers validate
 * the whole request before: a request refused after this leaves its new bank behind.
 */
export async function bankForWrite(
  s: Deps<BankStore>,
  projectId: string,
  bankId: string,
  opts: { space?: string } = {},
): Promise<Bank> {
  checkId('bank id', bankId, 'bank');
  const existing = await s.store.getBank(projectId, bankId);
  if (existing) return existing;
  const orgSpace = orgSpaceOf(bankId);
  const spaceId = orgSpace ?? opts.space ?? null;
  if (spaceId !== null && !(await s.store.getSpace(projectId, spaceId))) throw notFound(`space '${spaceId}'`);
  return s.store.ensureBank(projectId, bankId, { spaceId, isOrgBank: orgSpace !== null });
}

export interface BankProfile {
  id: string;
  name: string | null;
  mission: string | null;
  space_id: string | null;
  is_org_bank: boolean;
  created_at: Date;
  updated_at: Date;
  memory_count: number;
  entity_count: number;
  document_count: number;
  disposition: { skepticism: number; literalism: number; empathy: number };
  /** Language model tokens spent on this bank (extraction, reflect, consolidation). */
  llm_usage: { input_tokens: number; output_tokens: number };
}

export async function bankProfile(s: Deps<BankStore>, bank: Bank): Promise<BankProfile> {
  const counts = await s.store.bankCounts(bank.project_id, bank.id);
  const cfg = effectiveConfig(bank.config);
  return {
    id: bank.id,
    name: bank.name,
    mission: bank.mission,
    space_id: bank.space_id,
    is_org_bank: bank.is_org_bank,
    created_at: bank.created_at,
    updated_at: bank.updated_at,
    ...counts,
    disposition: {
      skepticism: cfg.disposition_skepticism,
      literalism: cfg.disposition_literalism,
      empathy: cfg.disposition_empathy,
    },
    llm_usage: { input_tokens: Number(bank.llm_input_tokens), output_tokens: Number(bank.llm_output_tokens) },
  };
}

export interface BankConfigView {
  bank_id: string;
  config: BankConfig;
  overrides: Record<string, unknown>;
}

export const configView = (bank: Bank): BankConfigView => ({
  bank_id: bank.id,
  config: effectiveConfig(bank.config),
  overrides: bank.config,
});

/**
 * The validated form of config updates, or a 400 (`master_key_missing` for encryption without a
 * master key). Pure: a write that creates its bank checks this first.
 */
export function checkConfigUpdates(updates: Record<string, unknown>, opts: { masterKeySet: boolean }) {
  const clean = validateConfigUpdates(updates);
  if (clean.encryption === 'managed' && !opts.masterKeySet) {
    throw new AppError(
      'master_key_missing',
      'encryption "managed" needs the server master key (MNEMO_MASTER_KEY)',
      {
        details: [{ path: 'updates.encryption', message: 'MNEMO_MASTER_KEY is not set' }],
      },
    );
  }
  return clean;
}

export async function updateConfig(
  s: Deps<BankStore>,
  bank: Bank,
  updates: Record<string, unknown>,
  opts: { masterKeySet: boolean },
): Promise<BankConfigView> {
  const clean = checkConfigUpdates(updates, opts);
  // Merged in the database under the row lock, never read here and written back whole: two
  // concurrent PATCHes of different keys both survive.
  const updated = await s.store.updateBankConfig(bank.project_id, bank.id, clean);
  if (!updated) throw notFound(`bank '${bank.id}'`);
  return configView(updated.bank);
}

/** Disposition shortcut used by Hindsight-style profile updates. */
export async function updateIdentity(
  s: Deps<BankStore>,
  bank: Bank,
  patch: { name?: string | null; mission?: string | null },
): Promise<Bank> {
  const updated = await s.store.updateBank(bank.project_id, bank.id, patch);
  if (!updated) throw notFound(`bank '${bank.id}'`);
  return updated;
}
