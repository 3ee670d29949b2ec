import { effectiveConfig } from './bank-config.js';
import { type BankConfigView, requireBank, updateConfig, updateIdentity } from './banks.js';
import type { Services } from './services.js';
import type { Bank, FactType } from './types.js';

/**
 * Removes the bank's config overrides, so every setting is the default again — but for
 * `encryption`, which is not a tuning to reset: dropping it would decrypt the bank.
 */
export async function resetConfig(
  s: Services,
  bank: Bank,
  opts: { masterKeySet: boolean },
): Promise<BankConfigView> {
  const updates = Object.fromEntries(
    Object.keys(bank.config)
      .filter((k) => k !== 'encryption')
      .map((k) => [k, null]),
  );
  return updateConfig(s, bank, updates, opts);
}

/** Hindsight's older disposition call: the three traits as config. */
export async function setDisposition(
  s: Services,
  bank: Bank,
  d: { skepticism: number; literalism: number; empathy: number },
  opts: { masterKeySet: boolean },
): Promise<Bank> {
  await updateConfig(
    s,
    bank,
    {
      disposition_skepticism: d.skepticism,
      disposition_literalism: d.literalism,
      disposition_empathy: d.empathy,
    },
    opts,
  );
  return requireBank(s, bank.project_id, bank.id);
}

/** Hindsight's older `background` call, which sets the mission. */
export async function setBackground(s: Services, bank: Bank, content: string) {
  const updated = await updateIdentity(s, bank, { mission: content.trim() || null });
  const cfg = effectiveConfig(updated.config);
  return {
    mission: updated.mission ?? '',
    background: updated.mission,
    disposition: {
      skepticism: cfg.disposition_skepticism,
      literalism: cfg.disposition_literalism,
      empathy: cfg.disposition_empathy,
    },
  };
}

/** Deletes the bank's memories (of one fact type, when given) and documents left empty; keeps the bank. */
export async function clearMemories(s: Services, projectId: string, bankId: string, type?: FactType) {
  await requireBank(s, projectId, bankId);
  const n = await s.store.clearMemories(projectId, bankId, type ? [type] : undefined);
  return {
    success: true as const,
    deleted_count: n,
    message: `${n} ${type ? `${type} ` : ''}memories deleted from bank '${bankId}'`,
  };
}
