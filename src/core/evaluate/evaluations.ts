import { randomUUID } from 'node:crypto';
import {
  DEFAULT_EVALUATION_K,
  EVALUATION_CHANNELS,
  MAX_EVALUATION_CASES,
} from '../../contract/evaluations.js';
import type { EvaluationSummary, StoredEvaluation, BankStore, EvaluationStore } from '../../store/store.js';
import { countTokens } from '../../text/tokens.js';
import { effectiveConfig } from '../bank-config.js';
import { requireBank } from '../banks.js';
import { AppError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { chargeRefundable } from '../budgets.js';
import { type Budget, recallUnits } from '../recall/budget.js';
import {
  type ChannelIds,
  DEFAULT_MAX_TOKENS,
  MAX_QUERY_TOKENS,
  type RecallStore,
  recall,
} from '../recall/recall.js';
import type { Deps } from '../services.js';
import { rateLimited } from '../windows.js';
import { meanFigures, ranksWithin, round6, scoreCase } from './metrics.js';

/**
 * How long the bank's evaluation slot is held without renewal: a process that dies mid-run
 * gives it up after this. A run renews it every third of it.
 */
const RUN_LEASE_MS = 60_000;
/** The `Retry-After` of a run refused because another of the bank's is under way. */
const RUN_RETRY_SECONDS = 5;

/** Runs kept per bank: beyond it, a new run drops the oldest. */
export const KEPT_RUNS = 1000;

type Channel = (typeof EVALUATION_CHANNELS)[number];

/** One case as asked (and as kept, to be run again). */
export interface EvaluationCaseInput {
  query: string;
  expected_memory_ids: string[];
  /** ISO 8601. */
  query_timestamp?: string;
  tags?: string[];
}

export interface EvaluationInput {
  k?: number;
  budget?: Budget;
  max_tokens?: number;
  cases?: EvaluationCaseInput[];
  /** A past run of the bank whose cases run again. */
  from?: string;
}

/** The Recall options a run was asked for: a rerun asks the same unless told otherwise. */
interface RunOptions {
  budget: Budget;
  max_tokens: number;
  request: { budget?: Budget; max_tokens?: number };
}

interface CaseOutcome extends EvaluationCaseInput {
  rank: number | null;
  recall_at_k: number;
  found_by: Channel[];
  expected: { memory_id: string; rank: number | null; found_by: Channel[] }[];
}

function summaryView(e: EvaluationSummary) {
  const options = e.options as Partial<RunOptions>;
  const none = { recall_at_k: 0, mrr: 0 };
  return {
    id: e.id,
    bank_id: e.bank_id,
    created_at: e.created_at,
    k: e.k,
    budget: options.budget ?? 'mid',
    max_tokens: options.max_tokens ?? DEFAULT_MAX_TOKENS,
    case_count: e.case_count,
    recall_at_k: e.recall_at_k,
    mrr: e.mrr,
    channels: Object.fromEntries(EVALUATION_CHANNELS.map((c) => [c, e.channels[c] ?? none])) as Record<
      Channel,
      { recall_at_k: number; mrr: number }
    >,
  };
}

const view = (e: StoredEvaluation) => ({ ...summaryView(e), cases: JSON.parse(e.cases) as CaseOutcome[] });

/** The case as kept: expected ids once each (lower case), the timestamp in one form. */
function normalise(c: EvaluationCaseInput): EvaluationCaseInput {
  return {
    query: c.query,
    expected_memory_ids: [...new Set(c.expected_memory_ids.map((id) => id.toLowerCase()))],
    ...(c.query_timestamp !== undefined && { query_timestamp: new Date(c.query_timestamp).toISOString() }),
    ...(c.tags !== undefined && { tags: c.tags }),
  };
}

/** Every case is checked before any runs: a bad one found at case 900 would waste 899 Recalls. */
function checkCases(cases: EvaluationCaseInput[]): void {
  if (cases.length === 0 || cases.length > MAX_EVALUATION_CASES) {
    throw new AppError('validation_error', `an evaluation runs 1 to ${MAX_EVALUATION_CASES} cases`, {
      details: [{ path: 'cases', message: `1 to ${MAX_EVALUATION_CASES} cases` }],
    });
  }
  const details = cases.flatMap((c, i) =>
    countTokens(c.query) > MAX_QUERY_TOKENS
      ? [{ path: `cases.${i}.query`, message: `at most ${MAX_QUERY_TOKENS} tokens` }]
      : [],
  );
  if (details.length) {
    throw new AppError('query_too_long', `a case's query is longer than ${MAX_QUERY_TOKENS} tokens`, {
      details: details.slice(0, 20),
    });
  }
}

/**
 * Runs each case through Recall (the same code as `POST .../memories/recall`, never its answer
 * cache), one after another so that an evaluation takes one Recall's share of the server at a
 * time, and keeps the run. See metrics.ts for what the figures mean.
 */
export async function runEvaluation(
  s: Deps<RecallStore & EvaluationStore, 'embedder' | 'limitDefaults' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  input: EvaluationInput,
  signal?: AbortSignal,
) {
  const bank = await requireBank(s, projectId, bankId);
  let cases: EvaluationCaseInput[];
  let request: RunOptions['request'];
  let k: number;
  if (input.from !== undefined) {
    const past = isUuid(input.from) ? await s.store.getEvaluation(projectId, bankId, input.from) : null;
    if (!past) throw notFound(`evaluation '${input.from}'`);
    const asked = (past.options as Partial<RunOptions>).request ?? {};
    cases = (JSON.parse(past.cases) as CaseOutcome[]).map((c) =>
      normalise({
        query: c.query,
        expected_memory_ids: c.expected_memory_ids,
        query_timestamp: c.query_timestamp,
        tags: c.tags,
      }),
    );
    request = {
      ...((input.budget ?? asked.budget) && { budget: input.budget ?? asked.budget }),
      ...((input.max_tokens ?? asked.max_tokens) && { max_tokens: input.max_tokens ?? asked.max_tokens }),
    };
    k = input.k ?? past.k;
  } else {
    cases = (input.cases ?? []).map(normalise);
    request = {
      ...(input.budget && { budget: input.budget }),
      ...(input.max_tokens && { max_tokens: input.max_tokens }),
    };
    k = input.k ?? DEFAULT_EVALUATION_K;
  }
  checkCases(cases);
  const options: RunOptions = {
    budget: request.budget ?? effectiveConfig(bank.config).recall_default_budget,
    max_tokens: request.max_tokens ?? DEFAULT_MAX_TOKENS,
    request,
  };

  // One run of a bank at a time, on any number of instances: decided before the charge, so a
  // refused run costs nothing; the slot is held (and renewed) until the run ends.
  const holder = randomUUID();
  if (!(await s.store.takeEvaluationRun(projectId, bankId, holder, RUN_LEASE_MS))) {
    throw rateLimited(
      'evaluations_per_bank',
      `an evaluation of bank '${bankId}' is under way; retry once it has finished`,
      1,
      1,
      RUN_RETRY_SECONDS,
    );
  }
  const renew = setInterval(() => {
    s.store.renewEvaluationRun(projectId, bankId, holder, RUN_LEASE_MS).catch(() => {});
  }, RUN_LEASE_MS / 3);
  try {
    return await runCases(s, projectId, bankId, cases, k, options, signal);
  } finally {
    clearInterval(renew);
    await s.store.endEvaluationRun(projectId, bankId, holder).catch(() => {});
  }
}

/** The cases of a run, charged whole first, then each through Recall; the run kept. */
async function runCases(
  s: Deps<RecallStore & EvaluationStore, 'embedder' | 'limitDefaults' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  cases: EvaluationCaseInput[],
  k: number,
  options: RunOptions,
  signal?: AbortSignal,
) {
  // Each case is one Recall and costs what it would alone; all are charged before the first
  // runs, so a spent budget refuses the evaluation whole (429) rather than half-way. A run
  // stopped midway (its client gone, its bank deleted) gives back what its cases left to run cost.
  const caseUnits = cases.map((c) => recallUnits(c.query, options.budget, 1, options.max_tokens));
  let unrun = caseUnits.reduce((n, u) => n + u, 0);
  const refund = await chargeRefundable(s, projectId, { recall_units: unrun });

  const outcomes: CaseOutcome[] = [];
  const fused = [];
  const perChannel = Object.fromEntries(
    EVALUATION_CHANNELS.map((c) => [c, [] as ReturnType<typeof scoreCase>[]]),
  );
  try {
    for (const c of cases) {
      signal?.throwIfAborted();
      let lists: ChannelIds = { semantic: [], keyword: [], graph: [], temporal: [] };
      const answer = await recall(
        s,
        projectId,
        bankId,
        {
          query: c.query,
          budget: options.budget,
          max_tokens: options.max_tokens,
          tags: c.tags,
          query_timestamp: c.query_timestamp === undefined ? undefined : new Date(c.query_timestamp),
        },
        { onChannels: (ids) => (lists = ids), charged: true },
      );
      const expected = c.expected_memory_ids;
      const ranks = ranksWithin(
        answer.results.map((r) => r.id),
        expected,
        k,
      );
      const score = scoreCase(ranks);
      fused.push(score);
      for (const ch of EVALUATION_CHANNELS)
        perChannel[ch]!.push(scoreCase(ranksWithin(lists[ch], expected, k)));
      const foundBy = (id: string) => EVALUATION_CHANNELS.filter((ch) => lists[ch].includes(id));
      const detail = expected.map((id, i) => ({ memory_id: id, rank: ranks[i]!, found_by: foundBy(id) }));
      outcomes.push({
        ...c,
        rank: score.rank,
        recall_at_k: round6(score.recall),
        found_by: EVALUATION_CHANNELS.filter((ch) => detail.some((d) => d.found_by.includes(ch))),
        expected: detail,
      });
      unrun -= caseUnits[outcomes.length - 1]!;
    }
  } catch (err) {
    await refund({ recall_units: unrun });
    throw err;
  }

  const figures = meanFigures(fused);
  const saved = await s.store.insertEvaluation(
    projectId,
    bankId,
    {
      id: randomUUID(),
      k,
      options: options as unknown as Record<string, unknown>,
      case_count: outcomes.length,
      recall_at_k: figures.recall_at_k,
      mrr: figures.mrr,
      channels: Object.fromEntries(EVALUATION_CHANNELS.map((ch) => [ch, meanFigures(perChannel[ch]!)])),
      cases: JSON.stringify(outcomes),
    },
    KEPT_RUNS,
  );
  if (!saved) throw notFound(`bank '${bankId}'`);
  return view(saved);
}

export async function listEvaluations(
  s: Deps<BankStore & EvaluationStore>,
  projectId: string,
  bankId: string,
  page: { limit: number; cursor?: string },
) {
  await requireBank(s, projectId, bankId);
  const r = await s.store.listEvaluations(projectId, bankId, page);
  return { items: r.items.map(summaryView), next_cursor: r.next_cursor };
}

export async function getEvaluation(
  s: Deps<BankStore & EvaluationStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const e = isUuid(id) ? await s.store.getEvaluation(projectId, bankId, id) : null;
  if (!e) throw notFound(`evaluation '${id}'`);
  return view(e);
}

export async function deleteEvaluation(
  s: Deps<BankStore & EvaluationStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  if (!isUuid(id) || !(await s.store.deleteEvaluation(projectId, bankId, id)))
    throw notFound(`evaluation '${id}'`);
  return { deleted: true as const, id };
}
