import type { CompletionRequest, CompletionResult, LanguageModel } from '../llm/model.js';
import type { CostCharge, LimitStore, PayHops } from '../store/store.js';
import { DAY_MS, fixedWindow, MINUTE_MS, rateLimited } from './windows.js';
import type { Deps, Services } from './services.js';
import type { BudgetName } from './types.js';

/** What a request or job costs, in the units budgets count. */
export type CostUnit =
  | 'retained_items'
  | 'characters'
  | 'entities'
  | 'model_calls'
  | 'model_tokens'
  | 'recall_units';
export type Cost = Partial<Record<CostUnit, number>>;

interface BudgetSpec {
  name: BudgetName;
  unit: CostUnit;
  window: 'minute' | 'day';
}

/**
 * Every cost budget, in the one order counters are charged in (so that two charges never
 * lock the same rows in opposite orders). Each is a fixed-window counter per project.
 */
export const BUDGETS: readonly BudgetSpec[] = [
  { name: 'retained_items_per_minute', unit: 'retained_items', window: 'minute' },
  { name: 'characters_per_minute', unit: 'characters', window: 'minute' },
  { name: 'characters_per_day', unit: 'characters', window: 'day' },
  { name: 'entities_per_minute', unit: 'entities', window: 'minute' },
  { name: 'entities_per_day', unit: 'entities', window: 'day' },
  { name: 'model_calls_per_minute', unit: 'model_calls', window: 'minute' },
  { name: 'model_calls_per_day', unit: 'model_calls', window: 'day' },
  { name: 'model_tokens_per_minute', unit: 'model_tokens', window: 'minute' },
  { name: 'model_tokens_per_day', unit: 'model_tokens', window: 'day' },
  { name: 'recall_units_per_minute', unit: 'recall_units', window: 'minute' },
  { name: 'recall_units_per_day', unit: 'recall_units', window: 'day' },
];

export const BUDGET_NAMES = BUDGETS.map((b) => b.name);

/** Units a background job incurs as it runs: a job of a project with none of them left waits. */
const JOB_UNITS: readonly CostUnit[] = ['entities', 'model_calls', 'model_tokens'];

const windowMs = (b: BudgetSpec) => (b.window === 'minute' ? MINUTE_MS : DAY_MS);

function charges(s: Pick<Services, 'limitDefaults' | 'now'>, cost: Cost): CostCharge[] {
  const now = s.now();
  const defaults = s.limitDefaults?.budgets ?? {};
  return BUDGETS.filter((b) => cost[b.unit] !== undefined).map((b) => ({
    name: b.name,
    kind: b.unit,
    subject: b.window,
    windowStart: fixedWindow(now, windowMs(b)).start,
    amount: cost[b.unit]!,
    defaultLimit: defaults[b.name] ?? null,
  }));
}

/**
 * What a listing pays for walking its rows (issue 18): each statement past a walk's first, which
 * skips up to SKIP_PER_STATEMENT rows towards a deep offset or counts as many for a total, costs
 * one recall unit, charged before it runs (a 429 when the budget is spent). Offset 0 and cursor
 * pages over a bank of fewer rows than that cost nothing.
 */
export function walkFare(s: Deps<LimitStore, 'limitDefaults' | 'now'>, projectId: string): PayHops {
  return (hops) => chargeCost(s, projectId, { recall_units: hops }, 'check');
}

/**
 * What a whole-bank aggregate pays (issue 18): `hops` units charged at once, before any of its
 * walks runs (a 429 then, with nothing read), then `walkFare` for each hop past those. `hops` is
 * what the bank's size says its walk of memories takes past the first hop:
 * floor(memory_count / SKIP_PER_STATEMENT).
 */
export async function prepaidFare(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  hops: number,
): Promise<PayHops> {
  const fare = walkFare(s, projectId);
  if (hops > 0) await fare(hops);
  let credit = hops;
  return async (n) => {
    const paid = Math.min(credit, n);
    credit -= paid;
    if (n > paid) await fare(n - paid);
  };
}

/** A job's project is over one of its budgets: the job waits `delayMs` (the window's reset). */
export class BudgetWait extends Error {
  constructor(
    readonly budget: BudgetName,
    readonly delayMs: number,
  ) {
    super(`waiting for the project's ${budget} budget (resets in ${Math.ceil(delayMs / 1000)} s)`);
    this.name = 'BudgetWait';
  }
}

interface Refusal {
  spec: BudgetSpec;
  limit: number;
  used: number;
  amount: number;
  resetSeconds: number;
}

/** Charges `cost` (all or nothing); says which budget refused it, if one did. */
async function charge(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  cost: Cost,
  force: boolean,
): Promise<Refusal | null> {
  return (await chargeCounted(s, projectId, cost, force)).refusal;
}

/** `charge`, and the counters it charged (those with a limit), as they were charged. */
async function chargeCounted(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  cost: Cost,
  force: boolean,
): Promise<{ refusal: Refusal | null; charged: CostCharge[] }> {
  const list = charges(s, cost);
  const r = await s.store.chargeCost(projectId, list, force);
  if (r.accepted) {
    const counted = new Set(r.counts.map((c) => c.name));
    return { refusal: null, charged: list.filter((c) => counted.has(c.name)) };
  }
  const spec = BUDGETS.find((b) => b.name === r.exceeded.name)!;
  return {
    refusal: {
      spec,
      limit: r.exceeded.limit,
      used: r.exceeded.used,
      amount: r.amount,
      resetSeconds: fixedWindow(s.now(), windowMs(spec)).resetSeconds,
    },
    charged: [],
  };
}

/**
 * Charges `cost` against the project's budgets, all or nothing. `check`: a cost that would take
 * any budget past its limit is a 429 (`Retry-After`, `RateLimit-*`) and nothing is charged; a
 * zero amount asks only that some of the budget is left. `force`: the cost was incurred already
 * (a running job), so it is counted whatever the budget says.
 */
export async function chargeCost(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  cost: Cost,
  mode: 'check' | 'force',
): Promise<void> {
  const r = await charge(s, projectId, cost, mode === 'force');
  if (r) throw budgetRefusal(r);
}

/**
 * Gives back `part` of a charge (all that is left of it by default); see `chargeRefundable`.
 * `handOver` takes `part` out of what it can give back and returns it as counters (with their
 * windows): the charge then belongs to whoever keeps them (a queued operation, see
 * `OperationStore.finishOperation`), and this refund no longer gives that part back; with `dry`
 * it only says what it would hand over.
 */
export type CostRefund = ((part?: Cost) => Promise<void>) & {
  handOver(part: Cost, dry?: boolean): CostCharge[];
};

/**
 * Charges `cost` as `chargeCost` does (`check` by default) and returns what gives it back, for
 * work refused or left undone after its charge: all of it, or `part` (per unit). A refund goes to the counters
 * and windows the charge went to, and all refunds together never give back more than was
 * charged, so a refund that runs twice (a retry, two catch blocks) cannot lower another
 * request's count.
 */
export async function chargeRefundable(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  cost: Cost,
  mode: 'check' | 'force' = 'check',
): Promise<CostRefund> {
  const { refusal, charged } = await chargeCounted(s, projectId, cost, mode === 'force');
  if (refusal) throw budgetRefusal(refusal);
  return refundOf(s, projectId, charged);
}

/** What gives back the counters `charged` were charged, at most once in all (see `chargeRefundable`). */
function refundOf(s: Deps<LimitStore>, projectId: string, charged: CostCharge[]): CostRefund {
  const left = charged.map((c) => ({ ...c }));
  const take = (part: Cost | undefined, dry = false) => {
    const back = [];
    for (const c of left) {
      const amount = Math.min(c.amount, Math.max(0, part ? (part[c.kind as CostUnit] ?? 0) : c.amount));
      if (amount <= 0) continue;
      if (!dry) c.amount -= amount;
      back.push({ ...c, amount });
    }
    return back;
  };
  const refund = async (part?: Cost) => {
    const back = take(part);
    if (back.length) await s.store.refundCost(projectId, back);
  };
  return Object.assign(refund, { handOver: (part: Cost, dry?: boolean) => take(part, dry) });
}

/**
 * Charges `cost` as `chargeCost(check)` does, then runs `work`; when `work` throws, the charge is
 * given back before the error goes on. For work that can still be refused after its charge, by a
 * check only the work itself can decide (another export of the bank queued at the same instant):
 * the refusal and the charge are then one decision, and a refused request costs nothing.
 */
export async function chargedFor<T>(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  cost: Cost,
  work: () => Promise<T>,
): Promise<T> {
  const refund = await chargeRefundable(s, projectId, cost);
  try {
    return await work();
  } catch (err) {
    await refund();
    throw err;
  }
}

/** The 429 of a budget that refused a charge. */
function budgetRefusal(r: Refusal) {
  const unit = r.spec.unit.replace('_', ' ');
  const detail =
    r.amount > r.limit
      ? `this request alone costs ${r.amount} ${unit}, more than the budget`
      : `${r.used} used${r.amount ? `, ${r.amount} more asked` : ''}`;
  return rateLimited(
    r.spec.name,
    `project budget of ${r.limit} ${unit} per ${r.spec.window} reached (${detail}); retry in ${r.resetSeconds} s`,
    r.limit,
    r.used,
    r.resetSeconds,
  );
}

/** Like `chargeCost(check)` for a job that can stop and resume: a refusal is a `BudgetWait`. */
async function chargeOrWait(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  cost: Cost,
): Promise<void> {
  const r = await charge(s, projectId, cost, false);
  if (r) throw new BudgetWait(r.spec.name, r.resetSeconds * 1000);
}

/**
 * Before a job runs work that costs: throws `BudgetWait` when any budget of the units a job
 * incurs (entities, model calls, model tokens) is spent in its current window.
 */
export async function awaitBudget(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
): Promise<void> {
  await chargeOrWait(s, projectId, Object.fromEntries(JOB_UNITS.map((u) => [u, 0])));
}

/**
 * Asks only that some of the project's model budgets (calls, tokens) is left: a 429 for a
 * project that has spent one, before a request charges work that leads to a model call.
 */
export const requireModelBudget = (s: Deps<LimitStore, 'limitDefaults' | 'now'>, projectId: string) =>
  chargeCost(s, projectId, { model_calls: 0, model_tokens: 0 }, 'check');

/**
 * How a metered model charges each call, before it is made:
 * - `request`: a spent budget is a 429 and no call is made;
 * - `job`: counted regardless (a job that cannot resume midway, admitted by `awaitBudget`);
 * - `resumable`: a spent budget stops the job with `BudgetWait` (its progress is kept).
 */
export type MeterMode = 'request' | 'job' | 'resumable';

/**
 * Tokens a call may cost, known before it is made: its prompt (system and messages, at ~4
 * characters a token: counting them exactly would cost as much as a short BPE pass over a prompt
 * of up to ~100,000 tokens on the request path) and the most it may answer (`maxTokens`).
 */
export function callTokensEstimate(request: CompletionRequest): number {
  let chars = request.system?.length ?? 0;
  for (const m of request.messages) chars += m.content.length;
  return Math.ceil(chars / 4) + (request.maxTokens ?? 0);
}

/**
 * The language model as seen by one project: each call is charged before it is made (see
 * `MeterMode`) as a model call and the tokens it may cost (`callTokensEstimate`), so a call that
 * would take the token budget past its limit is not made. When it answers, the charge is set to
 * the tokens the provider reports: the difference is charged, or given back.
 */
export function meteredModel(
  s: Deps<LimitStore, 'limitDefaults' | 'llm' | 'now'>,
  projectId: string,
  mode: MeterMode,
): LanguageModel | null {
  const llm = s.llm;
  if (!llm) return null;
  return {
    provider: llm.provider,
    model: llm.model,
    async complete(request) {
      const estimate = callTokensEstimate(request);
      const cost: Cost = { model_calls: 1, model_tokens: estimate };
      let r = await chargeCounted(s, projectId, cost, mode === 'job');
      // A job's call larger than what is left of a budget runs when the budget is not spent: it
      // might never fit a window otherwise. Only a spent budget makes the job wait.
      if (r.refusal && mode === 'resumable' && r.refusal.used < r.refusal.limit) {
        r = await chargeCounted(s, projectId, cost, true);
      }
      const { refusal, charged } = r;
      if (refusal && mode === 'resumable')
        throw new BudgetWait(refusal.spec.name, refusal.resetSeconds * 1000);
      if (refusal) throw budgetRefusal(refusal);
      const refund = refundOf(s, projectId, charged);
      let res: CompletionResult;
      try {
        res = await llm.complete(request);
      } catch (err) {
        // No answer: the call stays counted, the tokens it might have cost are given back.
        await refund({ model_tokens: estimate });
        throw err;
      }
      const tokens = res.usage.inputTokens + res.usage.outputTokens;
      if (tokens > estimate) await chargeCost(s, projectId, { model_tokens: tokens - estimate }, 'force');
      else if (tokens < estimate) await refund({ model_tokens: estimate - tokens });
      return res;
    },
  };
}

/** The services with the language model metered for the project. */
export function withMeteredModel<D extends Deps<LimitStore, 'limitDefaults' | 'llm' | 'now'>>(
  s: D,
  projectId: string,
  mode: MeterMode,
): D {
  return s.llm ? { ...s, llm: meteredModel(s, projectId, mode) } : s;
}

/**
 * The cost of a Retain known from its validated request: items, characters (content and
 * context) and the entities the items give (those extracted are charged once known).
 */
export function retainCost(
  items: readonly { content: string; context?: string; entities?: unknown[] }[],
): Cost {
  let characters = 0;
  let entities = 0;
  for (const it of items) {
    characters += it.content.length + (it.context?.length ?? 0);
    entities += it.entities?.length ?? 0;
  }
  // No entity amount at all when none are given: a zero would ask for room in the entity budget.
  return { retained_items: items.length, characters, ...(entities > 0 && { entities }) };
}

/** Current window counts of every budget (0 where nothing was counted). */
export async function budgetUsage(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
): Promise<Record<BudgetName, number>> {
  const counts = await s.store.costCounts(
    projectId,
    charges(s, Object.fromEntries(BUDGETS.map((b) => [b.unit, 0]))),
  );
  return Object.fromEntries(BUDGET_NAMES.map((n) => [n, counts.get(n) ?? 0])) as Record<BudgetName, number>;
}
