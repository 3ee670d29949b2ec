import { effectiveConfig } from './bank-config.js';
import { type BankConfigView, requireBank, updateConfig, updateIdentity } from './banks.js';
import { notFound } from './errors.js';
import { isUuid } from './ids.js';
import type { Deps } from './services.js';
import type { BankStore, MemoryStore, UpkeepStore } from '../store/store.js';
import type { Bank, FactType } from './types.js';

/**
 * Removes the bank's config overrides, so every setting is the default again — but for
 * `encryption`, which is not a tuning to reset: dropping it would decrypt the bank.
 */
export async function resetConfig(
  s: Deps<BankStore>,
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
  s: Deps<BankStore>,
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
export async function setBackground(s: Deps<BankStore>, bank: Bank, content: string) {
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
export async function clearMemories(
  s: Deps<BankStore & MemoryStore>,
  projectId: string,
  bankId: string,
  type?: FactType,
) {
  await requireBank(s, projectId, bankId);
  const n = await s.store.clearMemories(projectId, bankId, type ? [type] : undefined);
  return {
    success: true as const,
    deleted_count: n,
    message: `${n} ${type ? `${type} ` : ''}memories deleted from bank '${bankId}'`,
  };
}

/**
 * Deletes the observations consolidation wrote and rewinds it, so its next run (after the next
 * Retain, or `POST .../consolidate`) rebuilds them from every memory.
 */
export async function clearObservations(s: Deps<BankStore & UpkeepStore>, projectId: string, bankId: string) {
  await requireBank(s, projectId, bankId);
  const n = await s.store.clearObservations(projectId, bankId);
  return {
    success: true as const,
    deleted_count: n,
    message: `${n} observations deleted from bank '${bankId}'`,
  };
}

/** The tag sets observations were consolidated under, with how many each, most populous first. */
export async function observationScopes(s: Deps<BankStore & UpkeepStore>, projectId: string, bankId: string) {
  await requireBank(s, projectId, bankId);
  return { scopes: await s.store.observationScopes(projectId, bankId) };
}

/** Replaces the tags of every memory of a document. */
export async function setDocumentTags(
  s: Deps<BankStore & UpkeepStore>,
  projectId: string,
  bankId: string,
  documentId: string,
  tags: string[],
) {
  await requireBank(s, projectId, bankId);
  const n = await s.store.setDocumentTags(projectId, bankId, documentId, [...new Set(tags)]);
  if (n === null) throw notFound(`document '${documentId}'`);
  return { success: true as const, document_id: documentId, memories_updated: n };
}

/** A piece of a document by its id (a memory's id), whichever bank of the project holds it. */
export async function getChunk(s: Deps<MemoryStore & UpkeepStore>, projectId: string, chunkId: string) {
  const place = isUuid(chunkId) ? await s.store.memoryPlace(projectId, chunkId) : null;
  const [m] = place ? await s.store.getMemories(projectId, place.bank_id, [chunkId]) : [];
  if (!place || !m || m.document_id === null) throw notFound(`chunk '${chunkId}'`);
  return {
    chunk_id: m.id,
    document_id: m.document_id,
    bank_id: place.bank_id,
    chunk_index: place.position,
    chunk_text: m.text,
    created_at: m.created_at,
  };
}

/** Config keys Hindsight's bank bodies may set directly. */
const SETTING_KEYS = [
  'retain_mission',
  'retain_extraction_mode',
  'retain_custom_instructions',
  'retain_chunk_size',
  'enable_observations',
  'observations_mission',
  'enable_temporal_retrieval',
  'enable_graph_retrieval',
  'enable_reranking',
  'disposition_skepticism',
  'disposition_literalism',
  'disposition_empathy',
] as const;

type Level = number | null | undefined;
export type HindsightSettings = { [K in (typeof SETTING_KEYS)[number]]?: unknown } & {
  disposition?: { skepticism: Level; literalism: Level; empathy: Level } | null;
};

/**
 * The config updates a Hindsight bank body asks for: each setting it gives (null: left as it
 * is, as Hindsight reads null), the `disposition` object filling the traits not given one by one.
 */
export function settingsUpdates(body: HindsightSettings): Record<string, unknown> {
  const updates: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) if (body[key] !== undefined && body[key] !== null) updates[key] = body[key];
  if (body.disposition) {
    updates.disposition_skepticism ??= body.disposition.skepticism;
    updates.disposition_literalism ??= body.disposition.literalism;
    updates.disposition_empathy ??= body.disposition.empathy;
  }
  return updates;
}
