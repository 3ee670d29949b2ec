import { randomUUID } from 'node:crypto';
import {
  DEFAULT_MENTAL_MODEL_TOKENS,
  MAX_MENTAL_MODELS,
  MENTAL_MODEL_HISTORY,
} from '../contract/mental-models.js';
import type {
  MentalModelRecord,
  NewMentalModel,
  BankStore,
  MentalModelStore,
  OperationStore,
} from '../store/store.js';
import { countTokens } from '../text/tokens.js';
import { requireBank } from './banks.js';
import { AppError, invalid, notFound } from './errors.js';
import { queueRefreshes } from './mental-model-schedule.js';
import { MAX_QUERY_TOKENS } from './recall/recall.js';
import type { Deps } from './services.js';
import type { FactType, TagsMatch } from './types.js';

export type Detail = 'metadata' | 'content' | 'full';

/** A model's refresh settings as given (Hindsight's `trigger`), checked by the contract. */
export interface TriggerInput {
  mode?: 'full' | 'delta';
  refresh_after_consolidation?: boolean;
  fact_types?: FactType[] | null;
  exclude_mental_models?: boolean;
  exclude_mental_model_ids?: string[] | null;
  tags_match?: TagsMatch | null;
  response_schema?: Record<string, unknown> | null;
}

/** The settings as kept and shown: every field, absent ones at their defaults. */
export interface Trigger {
  mode: 'full';
  refresh_after_consolidation: boolean;
  refresh_cron: null;
  fact_types: FactType[] | null;
  exclude_mental_models: boolean;
  exclude_mental_model_ids: string[] | null;
  tags_match: TagsMatch | null;
  tag_groups: null;
  response_schema: Record<string, unknown> | null;
}

export interface MentalModelInput {
  id?: string | null;
  name: string;
  source_query: string;
  tags?: string[];
  max_tokens?: number;
  trigger?: TriggerInput;
}

/** A change of a model: a field absent or `null` keeps its value (Hindsight's clients send nulls). */
export type MentalModelUpdate = {
  [K in Exclude<keyof MentalModelInput, 'id'>]?: MentalModelInput[K] | null;
};

/** The trigger over `base` (the kept one, or the defaults), as stored. */
export function triggerOf(input: TriggerInput | undefined, base?: Record<string, unknown>): Trigger {
  const b = (base ?? {}) as Partial<Trigger>;
  const pick = <K extends keyof TriggerInput>(k: K, fallback: NonNullable<Trigger[K]> | null) =>
    input?.[k] !== undefined ? (input[k] ?? null) : (b[k] ?? fallback);
  return {
    mode: 'full',
    refresh_after_consolidation: (pick('refresh_after_consolidation', false) as boolean | null) ?? false,
    refresh_cron: null,
    fact_types: pick('fact_types', null) as FactType[] | null,
    exclude_mental_models: (pick('exclude_mental_models', false) as boolean | null) ?? false,
    exclude_mental_model_ids: pick('exclude_mental_model_ids', null) as string[] | null,
    tags_match: pick('tags_match', null) as TagsMatch | null,
    tag_groups: null,
    response_schema: pick('response_schema', null) as Record<string, unknown> | null,
  };
}

/** Stale: never refreshed (or cleared), or the bank changed since. */
export const isStale = (m: MentalModelRecord) =>
  m.refreshed_generation === null || m.refreshed_generation !== m.bank_generation;

/** A model as the API shows it, at Hindsight's detail levels. */
export function mentalModelView(m: MentalModelRecord, detail: Detail = 'full') {
  return {
    id: m.id,
    bank_id: m.bank_id,
    name: m.name,
    tags: m.tags,
    max_tokens: m.max_tokens,
    last_refreshed_at: m.last_refreshed_at,
    created_at: m.created_at,
    updated_at: m.updated_at,
    is_stale: isStale(m),
    refresh_pending: m.refresh_requested_at !== null,
    refresh_error: m.refresh_error,
    ...(detail !== 'metadata' && {
      source_query: m.source_query,
      content: m.content,
      trigger: triggerOf(undefined, m.trigger),
    }),
    ...(detail === 'full' && {
      reflect_response:
        m.reflect_response === null ? null : (JSON.parse(m.reflect_response) as Record<string, unknown>),
    }),
  };
}

const blank = (path: string) => invalid(path, 'must not be blank');

/** The query is what Recall will search with: Recall's own bound applies, checked here, not at refresh. */
function checkQuery(q: string): string {
  const query = q.trim();
  if (!query) throw blank('source_query');
  if (countTokens(query) > MAX_QUERY_TOKENS) {
    throw new AppError('query_too_long', `source_query is longer than ${MAX_QUERY_TOKENS} tokens`, {
      details: [{ path: 'source_query', message: `at most ${MAX_QUERY_TOKENS} tokens` }],
    });
  }
  return query;
}

export async function findMentalModel(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const m = await s.store.getMentalModel(projectId, bankId, id);
  if (!m) throw notFound(`mental model '${id}'`);
  return m;
}

export async function listMentalModels(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  q: { tags?: string[]; tagsMatch?: 'any' | 'all' | 'exact'; detail?: Detail; limit: number; offset: number },
) {
  await requireBank(s, projectId, bankId);
  const page = await s.store.listMentalModels(projectId, bankId, q);
  return {
    items: page.items.map((m) => mentalModelView(m, q.detail)),
    total: page.total,
    limit: q.limit,
    offset: q.offset,
  };
}

export async function getMentalModel(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  id: string,
  detail?: Detail,
) {
  return mentalModelView(await findMentalModel(s, projectId, bankId, id), detail);
}

/** A model as given, checked (its name not blank, its query within Recall's bound) and filled in. */
export function newMentalModel(input: MentalModelInput): NewMentalModel {
  const name = input.name.trim();
  if (!name) throw blank('name');
  return {
    id: input.id ?? randomUUID(),
    name,
    source_query: checkQuery(input.source_query),
    tags: [...new Set(input.tags ?? [])],
    max_tokens: input.max_tokens ?? DEFAULT_MENTAL_MODEL_TOKENS,
    trigger: { ...triggerOf(input.trigger) },
  };
}

/**
 * The store function a bank template import (or anything else) creates a model with: checked,
 * refused when the id is taken or the bank is full, not yet refreshed.
 */
export async function insertMentalModel(
  s: Deps<MentalModelStore>,
  projectId: string,
  bankId: string,
  input: MentalModelInput,
) {
  const m = newMentalModel(input);
  const made = await s.store.insertMentalModel(projectId, bankId, m, MAX_MENTAL_MODELS);
  if (made === null) throw notFound(`bank '${bankId}'`);
  if (made === 'exists')
    throw new AppError('conflict', `mental model '${m.id}' exists already in bank '${bankId}'`);
  if (made === 'full') {
    throw new AppError(
      'conflict',
      `bank '${bankId}' already holds ${MAX_MENTAL_MODELS} mental models, the most allowed`,
    );
  }
  return made;
}

/** Creates a model and queues its first refresh (Hindsight answers the refresh's operation id). */
export async function createMentalModel(
  s: Deps<BankStore & MentalModelStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  input: MentalModelInput,
) {
  await requireBank(s, projectId, bankId);
  const made = await insertMentalModel(s, projectId, bankId, input);
  const queued = await requestRefresh(s, projectId, bankId, made.id);
  const fresh = (await s.store.getMentalModel(projectId, bankId, made.id)) ?? made;
  return {
    mental_model_id: made.id,
    operation_id: queued.operation_id,
    mental_model: mentalModelView(fresh),
  };
}

export async function updateMentalModel(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  id: string,
  patch: MentalModelUpdate,
) {
  const current = await findMentalModel(s, projectId, bankId, id);
  const name = patch.name?.trim();
  if (name === '') throw blank('name');
  const m = await s.store.updateMentalModel(projectId, bankId, id, {
    name,
    source_query: patch.source_query == null ? undefined : checkQuery(patch.source_query),
    tags: patch.tags ? [...new Set(patch.tags)] : undefined,
    max_tokens: patch.max_tokens ?? undefined,
    trigger: patch.trigger == null ? undefined : { ...triggerOf(patch.trigger, current.trigger) },
  });
  if (!m) throw notFound(`mental model '${id}'`);
  return mentalModelView(m);
}

export async function deleteMentalModel(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  if (!(await s.store.deleteMentalModel(projectId, bankId, id))) throw notFound(`mental model '${id}'`);
  return { success: true as const, deleted: true as const, id };
}

/** Empties the content (the history keeps what it was); the model is stale until refreshed. */
export async function clearMentalModel(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await findMentalModel(s, projectId, bankId, id);
  const m = await s.store.saveMentalModelContent(
    projectId,
    bankId,
    id,
    { content: null, reflect_response: null, generation: null, cause: 'clear' },
    MENTAL_MODEL_HISTORY,
  );
  if (!m) throw notFound(`mental model '${id}'`);
  return mentalModelView(m);
}

export async function mentalModelHistory(
  s: Deps<BankStore & MentalModelStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await findMentalModel(s, projectId, bankId, id);
  return s.store.mentalModelHistory(projectId, bankId, id, MENTAL_MODEL_HISTORY);
}

/** `POST .../refresh`: marks the model and queues the bank's refresh operation. */
export async function requestRefresh(
  s: Deps<BankStore & MentalModelStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  if ((await s.store.requestMentalModelRefresh(projectId, bankId, { ids: [id] })) === 0)
    throw notFound(`mental model '${id}'`);
  return queueRefreshes(s, projectId, bankId);
}
