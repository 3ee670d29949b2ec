import { createHash } from 'node:crypto';
import { termFrequencies } from '../text/terms.js';
import type { FactType } from '../text/fact-type.js';
import { requireBank } from './banks.js';
import { scheduleConsolidation } from './consolidate/schedule.js';
import { AppError, invalid, notFound } from './errors.js';
import { isUuid } from './ids.js';
import { applyResolution, resolveEntityNames } from './retain/entities.js';
import type { Deps } from './services.js';
import type { BankStore, CurationStore, IntakeStore, MemoryStore, OperationStore } from '../store/store.js';
import type { EntityInput, Memory, MemoryState, NewMemory } from './types.js';

/** A client's change to one memory (Hindsight's curation body); '' clears a nullable field. */
export interface MemoryPatch {
  text?: string;
  context?: string | null;
  occurred_start?: Date | '' | null;
  occurred_end?: Date | '' | null;
  fact_type?: FactType;
  entities?: string[];
  resolve_entities?: boolean;
  state?: MemoryState;
  reason?: string | null;
}

/** Content fields: changing any of them rewrites the memory's text, postings, entities and vector. */
const CONTENT = ['text', 'context', 'occurred_start', 'occurred_end', 'fact_type', 'entities'] as const;

/** Attempts at an edit when another one keeps committing first (each re-reads the memory). */
const ATTEMPTS = 3;

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

/** The nullable field as patched: absent keeps `was`, '' or null clears it. */
const patched = <T>(v: T | '' | null | undefined, was: T | null): T | null =>
  v === undefined ? was : v === '' || v === null ? null : v;

/** The memory as the patch would leave it, prepared for the store: terms, entities, vector. */
async function prepare(
  s: Deps<IntakeStore, 'embedder'>,
  projectId: string,
  bankId: string,
  m: Memory,
  patch: MemoryPatch,
) {
  const text = patch.text ?? m.text;
  const context = patched(patch.context, m.context);
  let entities: EntityInput[] = (patch.entities ?? m.entities).map((name) => ({ text: name, type: 'OTHER' }));
  if (patch.entities && patch.resolve_entities !== false) {
    const resolved = await resolveEntityNames(
      s,
      projectId,
      bankId,
      entities.map((e) => e.text),
    );
    entities = applyResolution(entities, resolved);
  }
  const [embedding] = await s.embedder.embed([text]);
  const memory: NewMemory = {
    id: m.id,
    type: patch.fact_type ?? m.type,
    text,
    context,
    occurred_start: patched(patch.occurred_start, m.occurred_start),
    occurred_end: patched(patch.occurred_end, m.occurred_end),
    mentioned_at: m.mentioned_at,
    tags: m.tags,
    metadata: m.metadata,
    document_id: m.document_id,
    chunk_id: m.chunk_id,
    content_hash: hash(text),
    embedding: embedding ?? new Float32Array(0),
    terms: termFrequencies(context ? `${text}\n${context}` : text),
    entities,
  };
  return memory;
}

/**
 * Curates one memory (Hindsight's PATCH): invalidates it (kept, listed, restorable; Recall,
 * Reflect and consolidation leave it out) or makes it valid again, and/or edits its content,
 * rewriting its postings, entity links and vector with the row in one transaction. What
 * consolidation derived from it goes, and it is consolidated again. Two PATCHes never lose one
 * another's change: state changes are written under the row's lock, and an edit prepared from
 * a revision another edit has since replaced is prepared again from the new one.
 */
export async function curateMemory(
  s: Deps<
    BankStore & CurationStore & IntakeStore & MemoryStore & OperationStore,
    'embedder' | 'onEnqueue' | 'recallCache'
  >,
  projectId: string,
  bankId: string,
  id: string,
  patch: MemoryPatch,
): Promise<Memory> {
  await requireBank(s, projectId, bankId);
  const fields = CONTENT.filter((f) => patch[f] !== undefined);
  if (fields.length === 0 && patch.state === undefined && patch.reason === undefined)
    throw invalid('body', 'nothing to change: give `text`, `state` or another field');
  if (patch.text !== undefined && patch.text.trim() === '') throw invalid('text', 'must not be empty');
  const missing = () => notFound(`memory '${id}'`);
  if (!isUuid(id)) throw missing();
  for (let attempt = 0; ; attempt++) {
    const base = await s.store.curationBase(projectId, bankId, id);
    if (!base) throw missing();
    if (base.observation)
      throw invalid(
        'memory_id',
        `memory '${id}' is an observation consolidation wrote: it is derived, curate the memories it came from`,
      );
    let content: { memory: NewMemory; revision: number; fields: string[] } | undefined;
    if (fields.length) {
      const [m] = await s.store.getMemories(projectId, bankId, [id]);
      if (!m) throw missing();
      content = { memory: await prepare(s, projectId, bankId, m, patch), revision: base.revision, fields };
    }
    const out = await s.store.curateMemory(projectId, bankId, id, {
      state: patch.state,
      reason: patch.reason,
      content,
    });
    if (out.done) {
      // This process's Recall answers of the bank go now (every process's stopped being served
      // when the bank's generation moved in the same transaction).
      s.recallCache?.forgetBank(projectId, bankId);
      if (out.requeued > 0) await scheduleConsolidation(s, projectId, bankId).catch(() => undefined);
      const [m] = await s.store.getMemories(projectId, bankId, [id]);
      if (!m) throw missing();
      return m;
    }
    if (out.reason === 'missing') throw missing();
    if (out.reason === 'observation')
      throw invalid('memory_id', `memory '${id}' is an observation consolidation wrote`);
    if (attempt + 1 >= ATTEMPTS)
      throw new AppError('conflict', `memory '${id}' kept changing during the edit; retry`);
  }
}

/**
 * Deletes the observations consolidation derived from one memory and queues it (with the other
 * memories those observations came from) for consolidation again; Hindsight's answer.
 */
export async function clearMemoryObservations(
  s: Deps<BankStore & CurationStore & OperationStore, 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const done = isUuid(id) ? await s.store.clearMemoryObservations(projectId, bankId, id) : null;
  if (!done) throw notFound(`memory '${id}'`);
  s.recallCache?.forgetBank(projectId, bankId);
  if (done.requeued > 0) await scheduleConsolidation(s, projectId, bankId).catch(() => undefined);
  return { deleted_count: done.deleted };
}
