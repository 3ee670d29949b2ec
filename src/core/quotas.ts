import { StoredQuotaExceeded } from '../store/quota-error.js';
import type {
  LimitDefaults,
  LimitStore,
  MemoryStore,
  ObservationStore,
  OperationCharge,
} from '../store/store.js';
import {
  BUDGETS,
  budgetUsage,
  type CostRefund,
  chargeCost,
  chargeRefundable,
  retainCost,
} from './budgets.js';
import { DAY_MS, fixedWindow, MINUTE_MS, rateLimited } from './windows.js';
import type { Deps, Services } from './services.js';
import { AppError } from './errors.js';
import type { BudgetName, NewMemory, ObservationChange, Project, ProjectLimits } from './types.js';

export { DAY_MS, fixedWindow, MINUTE_MS, rateLimited, rateLimitHeaders } from './windows.js';

export const NO_LIMITS: LimitDefaults = {
  requestsPerMinute: null,
  requestsPerMinutePerKey: null,
  retainedItemsPerDay: null,
  storedMemories: null,
  budgets: {},
};

/** What a Retain's charge is counted from: its items (content, context, the entities they give). */
type Charged = { content: string; context?: string; entities?: unknown[] };

/**
 * Gives back the part of a Retain's charge that paid for `items` (all of its items by default):
 * their retained items of the day and their cost (items, characters, entities given).
 */
export type RetainRefund = ((items?: readonly Charged[]) => Promise<void>) & {
  /**
   * Hands the charge of `items` over to the operation that will store them (its `charge`): this
   * refund no longer gives it back; the operation does, for what it does not store. With `dry`
   * it only says what it would hand over (before the operation is known to be queued).
   */
  handOver(items: readonly Charged[], dry?: boolean): OperationCharge;
};

/**
 * Charges a Retain against the project's quotas before anything is written: retained items per
 * day and stored memories, then the cost budgets of what the request itself shows (items and
 * characters, see budgets.ts). Over any, it is a 429 and nothing is counted. Returns the refund
 * of the items a Retain refused or failed midway did not store (quota and cost alike); what it
 * stored stays charged. Together its refunds give back at most what it charged.
 */
export async function chargeRetain(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  batch: readonly Charged[],
): Promise<RetainRefund> {
  const refundItems = await chargeItemQuotas(s, projectId, batch.length);
  let refundCost: CostRefund;
  try {
    refundCost = await chargeRefundable(s, projectId, retainCost(batch));
  } catch (err) {
    await refundItems();
    throw err;
  }
  const refund = async (items: readonly Charged[] = batch) => {
    if (items.length === 0) return;
    await refundItems(items.length);
    await refundCost(retainCost(items));
  };
  return Object.assign(refund, {
    handOver: (items: readonly Charged[], dry = false): OperationCharge => ({
      ...(items.length ? { items: refundItems.handOver(items.length, dry) } : {}),
      counters: refundCost
        .handOver(retainCost(items), dry)
        .map(({ kind, subject, windowStart, amount }) => ({ kind, subject, windowStart, amount })),
    }),
  });
}

/**
 * Asks only that some of the project's Retain budgets (items, characters) is left: a 429 for a
 * project that has spent one, before a request makes the server read what it uploaded (a PDF, an
 * archive), whose cost is known, and charged, only once it is read.
 */
export const requireRetainBudget = (s: Deps<LimitStore, 'limitDefaults' | 'now'>, projectId: string) =>
  chargeCost(s, projectId, { retained_items: 0, characters: 0 }, 'check');

async function chargeItemQuotas(
  s: Deps<LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  items: number,
): Promise<
  ((n?: number) => Promise<void>) & {
    handOver(n: number, dry: boolean): { windowStart: Date; amount: number };
  }
> {
  const now = s.now();
  const day = fixedWindow(now, DAY_MS);
  const defaults = s.limitDefaults ?? NO_LIMITS;
  const r = await s.store.chargeItems({ projectId, items, windowStart: day.start, defaults });
  if (!r.accepted) {
    if (r.exceeded === 'stored_memories') throw storedQuotaError(s, r.limit, r.used, items);
    throw rateLimited(
      r.exceeded,
      `project quota of ${r.limit} retained items per day reached (${r.used} today, ${items} more asked)`,
      r.limit,
      r.used,
      day.resetSeconds,
    );
  }
  // Never more than was charged, however many refunds run.
  let left = items;
  const take = (n: number, dry = false) => {
    const back = Math.min(n, left);
    if (!dry) left -= back;
    return back;
  };
  const refund = async (n = items) => {
    const back = take(n);
    if (back > 0) await s.store.refundItems(projectId, back, day.start);
  };
  return Object.assign(refund, {
    handOver: (n: number, dry: boolean) => ({ windowStart: day.start, amount: take(n, dry) }),
  });
}

/** The 429 of the stored-memories quota: `used` stored, `asked` more would pass `limit`. */
function storedQuotaError(s: Pick<Services, 'now'>, limit: number, used: number, asked: number) {
  // Stored memories only go down when memories are deleted: no window will reset it.
  return rateLimited(
    'stored_memories',
    `project quota of ${limit} stored memories reached (${used} stored, ${asked} more asked); delete memories or ask the operator for a higher quota`,
    limit,
    used,
    fixedWindow(s.now(), DAY_MS).resetSeconds,
  );
}

/**
 * Writes a Retain's memories with the project's stored-memories quota checked in the writing
 * transaction (see `Store.insertMemories`): the check before the work (`chargeRetain`) cannot see
 * the other Retains in flight, this one can. Over the quota it is the quota's 429.
 */
export function insertWithinQuota(
  s: Deps<MemoryStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  memories: NewMemory[],
  opts: Omit<NonNullable<Parameters<MemoryStore['insertMemories']>[3]>, 'storedQuotaDefault'>,
): Promise<number> {
  return withinStoredQuota(s, (storedQuotaDefault) =>
    s.store.insertMemories(projectId, bankId, memories, { ...opts, storedQuotaDefault }),
  );
}

/**
 * Saves a consolidation step (see `Store.saveObservation`) with the stored-memories quota checked
 * in its transaction: a new observation counts like a retained memory, and past the quota the
 * step is the quota's 429, nothing written and the cursor unmoved.
 */
export function saveObservationWithinQuota(
  s: Deps<ObservationStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  change: ObservationChange,
  cursor: { from: number; to: number },
): Promise<boolean> {
  return withinStoredQuota(s, (storedQuotaDefault) =>
    s.store.saveObservation(projectId, bankId, change, cursor, { storedQuotaDefault }),
  );
}

/** Whether an error is the stored-memories quota's 429. */
export const isStoredQuotaError = (err: unknown): err is AppError =>
  err instanceof AppError && err.code === 'rate_limited' && err.extra?.limit === 'stored_memories';

/** Runs a quota-checked write, turning the store's refusal into the quota's 429. */
async function withinStoredQuota<T>(
  s: Pick<Services, 'limitDefaults' | 'now'>,
  write: (storedQuotaDefault: number | null) => Promise<T>,
): Promise<T> {
  try {
    return await write((s.limitDefaults ?? NO_LIMITS).storedMemories);
  } catch (err) {
    if (err instanceof StoredQuotaExceeded) throw storedQuotaError(s, err.limit, err.stored, err.adding);
    throw err;
  }
}

/** A project's limits with the server defaults applied (null = unlimited). */
export function effectiveLimits(
  s: Pick<Services, 'limitDefaults'>,
  limits: ProjectLimits,
): Required<ProjectLimits> {
  const d = s.limitDefaults ?? NO_LIMITS;
  const pick = (k: keyof ProjectLimits, fallback: number | null) =>
    k in limits ? (limits[k] ?? null) : fallback;
  return {
    requests_per_minute: pick('requests_per_minute', d.requestsPerMinute),
    requests_per_minute_per_key: pick('requests_per_minute_per_key', d.requestsPerMinutePerKey),
    retained_items_per_day: pick('retained_items_per_day', d.retainedItemsPerDay),
    stored_memories: pick('stored_memories', d.storedMemories),
    ...(Object.fromEntries(BUDGETS.map((b) => [b.name, pick(b.name, d.budgets?.[b.name] ?? null)])) as Record<
      BudgetName,
      number | null
    >),
  };
}

/** A project with its effective limits and current usage (this minute, today, stored). */
export async function projectWithUsage(s: Deps<LimitStore, 'limitDefaults' | 'now'>, project: Project) {
  const now = s.now();
  const usage = await s.store.projectUsage(project.id, {
    minuteStart: fixedWindow(now, MINUTE_MS).start,
    dayStart: fixedWindow(now, DAY_MS).start,
  });
  return {
    ...project,
    effective_limits: effectiveLimits(s, project.limits),
    usage: { ...usage, budgets: await budgetUsage(s, project.id) },
  };
}
