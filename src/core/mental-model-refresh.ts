import { MENTAL_MODEL_HISTORY } from '../contract/mental-models.js';
import type { MentalModelRecord, MentalModelStore, OperationStore } from '../store/store.js';
import { unifiedDiff } from '../text/diff.js';
import { countTokens, splitByTokens } from '../text/tokens.js';
import { awaitBudget, BudgetWait } from './budgets.js';
import { AppError } from './errors.js';
import { findMentalModel, triggerOf } from './mental-models.js';
import { type OperationRunner, OperationWait } from './operations.js';
import { type ReflectResponse, type ReflectStore, reflect } from './reflect/reflect.js';
import type { Deps } from './services.js';
import type { BudgetName, TagsMatch } from './types.js';

/** A refresh is a Reflect whose answer is kept in the mental model. */
export type RefreshStore = ReflectStore & MentalModelStore;

/** How long a refresh queued behind another of its bank waits before it looks again. */
const REFRESH_TURN_WAIT_MS = 1000;

/** A refresh's Reflect: the answer, and the content it makes (cut to the model's max_tokens). */
interface Refreshed {
  response: ReflectResponse;
  content: string;
  tags_match: TagsMatch;
  warnings: string[];
}

/**
 * Runs the model's source query through Reflect (the same code as `POST .../reflect`: the bank's
 * disposition and directives, the model's tags and trigger settings) and cuts the answer to
 * `max_tokens`. A model with tags draws only on memories with all of them (`all_strict`) unless
 * its trigger says otherwise, as in Hindsight.
 */
async function refreshAnswer(
  s: Deps<ReflectStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  m: MentalModelRecord,
) {
  const trigger = triggerOf(undefined, m.trigger);
  const tagsMatch = trigger.tags_match ?? (m.tags.length ? 'all_strict' : 'any');
  const response = await reflect(s, projectId, bankId, {
    query: m.source_query,
    tags: m.tags.length ? m.tags : undefined,
    tags_match: tagsMatch,
    fact_types: trigger.fact_types ?? undefined,
    response_schema: trigger.response_schema ?? undefined,
    answer_tokens: m.max_tokens,
  });
  const warnings: string[] = [];
  let content = response.response;
  if (countTokens(content) > m.max_tokens) {
    content = `${splitByTokens(content, Math.max(m.max_tokens - 1, 1))[0]}…`;
    warnings.push(`the answer was cut to the model's max_tokens (${m.max_tokens})`);
  }
  const r: Refreshed = { response, content, tags_match: tagsMatch, warnings };
  return r;
}

/** A spent project budget (a 429 from Reflect's charges) makes a job wait rather than fail. */
function budgetWait(err: unknown): never {
  if (err instanceof AppError && err.code === 'rate_limited') {
    const seconds = Number(err.headers?.['Retry-After'] ?? 60);
    throw new BudgetWait(String(err.extra?.limit ?? 'budget') as BudgetName, seconds * 1000);
  }
  throw err;
}

/**
 * The `refresh_mental_model` operation: refreshes the bank's models asked for, the longest
 * waiting first, one per slice (each is a Reflect), so other banks' work runs between two.
 * Charged to the project like a Reflect; a spent budget makes it wait. A refresh that cannot
 * succeed (a 4xx: no model for a `response_schema`, a query Recall refuses) is recorded on its
 * model and the next one goes on; a failing model or database is retried.
 */
export const runRefreshOperation: OperationRunner<
  Deps<
    RefreshStore & Pick<OperationStore, 'earlierOperationUnfinished'>,
    'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue' | 'recallCache'
  >
> = async (s, op) => {
  const { projectId, bankId } = op;
  const bank = await s.store.getBank(projectId, bankId);
  if (!bank) return {};
  // One refresh operation of a bank runs at a time, the earliest queued first: two at once (on
  // two workers or instances) would Reflect on the same model twice, both charged, and the one
  // begun first, finishing last, would overwrite the newer answer.
  if (await s.store.earlierOperationUnfinished(projectId, bankId, op.id, op.kind))
    throw new OperationWait('waiting for an earlier refresh of the bank to finish', REFRESH_TURN_WAIT_MS);
  const m = await s.store.nextMentalModelRefresh(projectId, bankId);
  // Each model once per operation: one asked for again meanwhile gets the operation its request
  // queued, and no operation runs more Reflects than the bank has models.
  const done = (op.progress as { done?: string[] } | null)?.done ?? [];
  if (!m || done.includes(m.id)) return {};
  await awaitBudget(s, projectId);
  op.signal.throwIfAborted();
  // The generation before the Reflect: a write meanwhile leaves the content stale, as it should.
  const generation = bank.generation;
  let refreshed: Refreshed;
  try {
    refreshed = await refreshAnswer(s, projectId, bankId, m);
  } catch (err) {
    if (err instanceof AppError && err.code === 'rate_limited') budgetWait(err);
    if (err instanceof AppError && err.status < 500) {
      await s.store.failMentalModelRefresh(projectId, bankId, m.id, m.refresh_requested_at, err.message);
      return { more: { done: [...done, m.id] } };
    }
    throw err;
  }
  await s.store.saveMentalModelContent(
    projectId,
    bankId,
    m.id,
    {
      content: refreshed.content,
      reflect_response: JSON.stringify(refreshed.response),
      generation,
      cause: 'refresh',
      requestedAt: m.refresh_requested_at,
    },
    MENTAL_MODEL_HISTORY,
  );
  return { more: { done: [...done, m.id] } };
};

/** Fact counts by type. */
function byType(items: { type: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[i.type] = (out[i.type] ?? 0) + 1;
  return out;
}

/**
 * `POST .../dry-run-refresh`: the refresh's Reflect run now (charged like one) and shown beside
 * the current content, with a unified diff; nothing is stored.
 */
export async function dryRunRefresh(
  s: Deps<RefreshStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const started = performance.now();
  const m = await findMentalModel(s, projectId, bankId, id);
  const r = await refreshAnswer(s, projectId, bankId, m);
  const trigger = triggerOf(undefined, m.trigger);
  const current = m.content ?? '';
  const used = [
    ...r.response.based_on.memories,
    ...r.response.based_on.observations.map((o) => ({ ...o, type: 'observation' })),
  ];
  const empty = r.content.trim() === '';
  const warnings = [...r.warnings];
  if (used.length === 0) warnings.push('Reflect found no memories for the source query');
  return {
    mental_model_id: m.id,
    name: m.name,
    requested_mode: 'full' as const,
    effective_mode: 'full' as const,
    outcome: empty ? ('refresh_failed_empty_candidate' as const) : ('content_written' as const),
    would_persist: !empty,
    scope: {
      tags: m.tags.length ? m.tags : null,
      tags_match: r.tags_match,
      fact_types: trigger.fact_types,
      exclude_mental_models: trigger.exclude_mental_models,
      exclude_mental_model_ids: [...new Set([...(trigger.exclude_mental_model_ids ?? []), m.id])],
    },
    window: { created_before: s.now(), created_after: null, watermark: null },
    // mnemo's Reflect uses every fact its Recall returns: retrieved and used are the same.
    facts: { retrieved: byType(used), used: byType(used) },
    based_on: JSON.parse(JSON.stringify(r.response.based_on)) as Record<string, Record<string, unknown>[]>,
    current_content: current,
    candidate_content: r.response.response,
    preview_content: r.content,
    diff: unifiedDiff(current, r.content, ['current', 'preview']),
    mode: r.response.mode,
    usage: r.response.usage,
    duration_ms: Math.round(performance.now() - started),
    warnings,
  };
}
