import { requireBank, staleVectors } from '../banks.js';
import { isStoredQuotaError, saveObservationWithinQuota } from '../quotas.js';
import type { Deps } from '../services.js';
import type { BankStore, MemoryStore, ObservationStore } from '../../store/store.js';
import type { ConsolidationSource } from '../types.js';
import { planWithModel } from './model-plan.js';
import { planByRules } from './rules.js';
import type { Neighbourhood, Step } from './step.js';

/** Consolidation reads the bank and its memories, and writes observations. */
export type ConsolidateStore = BankStore & MemoryStore & ObservationStore;

/** Memories read per round. */
const BATCH = 100;
/** Nearest observations and nearest memories looked at for each new memory. */
const CANDIDATES = 5;
/**
 * Cosine floor for a candidate. Restatements, negations and changed values of one fact sit far
 * above it in the local embedder's space; the judge (or the model) decides among the rest.
 */
const MIN_SIMILARITY = 0.5;

export interface ConsolidationResult {
  /** Memories looked at in this run. */
  processed: number;
  observations_created: number;
  observations_updated: number;
  contradictions: number;
  /** Observations deleted because every memory behind them was deleted. */
  pruned: number;
  /**
   * Why the run ended before its last memory: the project's `stored_memories` quota refused a
   * new observation. The cursor stays before that memory, so the next run (once memories are
   * deleted or the quota raised) goes on from it: nothing is skipped, nothing is retried here.
   */
  stopped?: string;
}

async function neighbourhood(
  s: Deps<MemoryStore & ObservationStore>,
  projectId: string,
  bankId: string,
  bankSize: number,
  m: ConsolidationSource,
): Promise<Neighbourhood | null> {
  if (m.embedding.length === 0) return null;
  const ask = (observations: boolean) =>
    s.store
      .consolidationCandidates(projectId, bankId, m.embedding, {
        observations,
        tags: m.tags,
        beforeSeq: m.seq,
        limit: CANDIDATES,
        bankSize,
      })
      .then((hits) => hits.filter((h) => h.score >= MIN_SIMILARITY && h.id !== m.id).map((h) => h.id));
  const [obsIds, memIds] = await Promise.all([ask(true), ask(false)]);
  if (obsIds.length === 0 && memIds.length === 0) return null;
  const [found, details] = await Promise.all([
    s.store.getMemories(projectId, bankId, [...obsIds, ...memIds]),
    s.store.observationDetails(projectId, bankId, obsIds),
  ]);
  const byId = new Map(found.map((x) => [x.id, x]));
  const pick = (ids: string[]) => ids.flatMap((id) => byId.get(id) ?? []);
  return { memory: m, observations: pick(obsIds), details, memories: pick(memIds) };
}

/** Prunes the bank's observations a page at a time (see `pruneObservations`). */
async function pruneAll(s: Deps<ObservationStore>, projectId: string, bankId: string): Promise<number> {
  let pruned = 0;
  let after: string | null = '';
  while (after !== null) {
    const page = await s.store.pruneObservations(projectId, bankId, { after, limit: 500 });
    pruned += page.pruned;
    after = page.next;
  }
  return pruned;
}

/** The model's step when one is configured and answers usably; the rules' otherwise. */
async function plan(
  s: Deps<BankStore & MemoryStore, 'embedder' | 'llm'>,
  projectId: string,
  bankId: string,
  near: Neighbourhood,
  signal: AbortSignal | undefined,
): Promise<Step | null> {
  const step = s.llm ? await planWithModel(s, s.llm, projectId, bankId, near, signal) : undefined;
  return step === undefined ? planByRules(s, projectId, bankId, near) : step;
}

/**
 * Consolidates again the memories whose observation a forget deleted (a memory behind it was
 * forgotten, so what it said cannot stay), wherever the cursor is; each step unmarks its memory
 * in its transaction. True when the deadline ended the run here (`result.more` is set).
 */
async function redoForgotten(
  s: Deps<ConsolidateStore, 'embedder' | 'llm'>,
  projectId: string,
  bankId: string,
  result: ConsolidationResult & { more?: true },
  opts: { signal?: AbortSignal; deadline?: { over(): boolean } },
): Promise<boolean> {
  for (;;) {
    const cursor = await s.store.consolidationCursor(projectId, bankId);
    const batch = await s.store.consolidationSources(projectId, bankId, cursor, BATCH, { redo: true });
    if (batch.length === 0) return false;
    const size = (await s.store.getBank(projectId, bankId))?.memory_count ?? 0;
    for (const m of batch) {
      opts.signal?.throwIfAborted();
      if (opts.deadline?.over()) {
        result.more = true;
        return true;
      }
      const near = await neighbourhood(s, projectId, bankId, size, m);
      const step = near && (await plan(s, projectId, bankId, near, opts.signal));
      const at = { from: cursor, to: cursor, redo: m.id };
      // Another run moved the cursor meanwhile: this batch is read again with it.
      if (!(await s.store.saveObservation(projectId, bankId, step?.change ?? null, at))) break;
      result.processed++;
      if (!step) continue;
      if (step.created) result.observations_created++;
      else result.observations_updated++;
      if (step.contradiction) result.contradictions++;
    }
  }
}

/**
 * Consolidates the memories retained since the last run into observations. Incremental (a
 * cursor over the bank's memory order) and idempotent: each step commits together with the
 * cursor, links are a set (proof counts are counted, never incremented), and a run that finds
 * the cursor moved by another run re-reads it instead of applying its step twice.
 *
 * With `deadline` it stops once the deadline is over (after the memory in hand), with the
 * cursor saved, and says `more`: the operation goes back to the queue and goes on from the
 * cursor in its next slice.
 */
export async function consolidateBank(
  s: Deps<ConsolidateStore, 'embedder' | 'limitDefaults' | 'llm' | 'now'>,
  projectId: string,
  bankId: string,
  opts: { signal?: AbortSignal; deadline?: { over(): boolean }; prune?: boolean } = {},
): Promise<ConsolidationResult & { more?: true }> {
  const bank = await requireBank(s, projectId, bankId);
  const result: ConsolidationResult & { more?: true } = {
    processed: 0,
    observations_created: 0,
    observations_updated: 0,
    contradictions: 0,
    pruned: 0,
  };
  if (opts.prune !== false) result.pruned = await pruneAll(s, projectId, bankId);
  // Neighbours are found by vector: with another embedder's vectors, wait for the re-embed
  // (it queues a run when done); the cursor stays, so nothing is skipped.
  if (staleVectors(s, bank)) return result;
  if (await redoForgotten(s, projectId, bankId, result, opts)) return result;
  for (;;) {
    opts.signal?.throwIfAborted();
    let cursor = await s.store.consolidationCursor(projectId, bankId);
    const batch = await s.store.consolidationSources(projectId, bankId, cursor, BATCH);
    if (batch.length === 0) return result;
    // Read per batch: an import grows the bank while a run works through it.
    const size = (await s.store.getBank(projectId, bankId))?.memory_count ?? bank.memory_count;
    let lost = false;
    /** The last memory done with: the cursor may move up to it. */
    let reached = cursor;
    for (const m of batch) {
      opts.signal?.throwIfAborted();
      if (opts.deadline?.over()) {
        result.more = true;
        break;
      }
      const near = await neighbourhood(s, projectId, bankId, size, m);
      const step = near && (await plan(s, projectId, bankId, near, opts.signal));
      if (!step) {
        reached = m.seq;
        continue;
      }
      let saved: boolean;
      try {
        saved = await saveObservationWithinQuota(s, projectId, bankId, step.change, {
          from: cursor,
          to: m.seq,
        });
      } catch (err) {
        // Only a new observation adds to what the project stores; the cursor stays before it.
        if (!isStoredQuotaError(err)) throw err;
        result.stopped = `${err.message}; consolidation stopped before this bank's memory ${m.id} and goes on from it in its next run`;
        break;
      }
      if (!saved) {
        lost = true;
        break;
      }
      cursor = reached = m.seq;
      if (step.created) result.observations_created++;
      else result.observations_updated++;
      if (step.contradiction) result.contradictions++;
    }
    if (
      !lost &&
      reached > cursor &&
      (await s.store.saveObservation(projectId, bankId, null, { from: cursor, to: reached }))
    ) {
      cursor = reached;
    }
    result.processed += batch.filter((m) => m.seq <= cursor).length;
    if (result.more || result.stopped) return result;
  }
}
