import { TIMESERIES_PERIODS, type TimeseriesPeriod } from '../contract/stats.js';
import { FACT_TYPES, type FactType } from '../contract/vocabulary.js';
import {
  type BankStore,
  type LimitStore,
  type OperationStore,
  SKIP_PER_STATEMENT,
  type StatsStore,
  type TimeField,
} from '../store/store.js';
import { prepaidFare } from './budgets.js';
import { requireBank } from './banks.js';
import type { Deps } from './services.js';

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * The bank, then what an aggregate over it pays (issue 18): its walk of the bank's memories
 * charged at once by their count, before any is read; any further hop as it runs.
 */
export async function aggregateFare(
  s: Deps<BankStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  walksMemories = true,
) {
  const bank = await requireBank(s, projectId, bankId);
  const hops = walksMemories ? Math.floor(bank.memory_count / SKIP_PER_STATEMENT) : 0;
  return prepaidFare(s, projectId, hops);
}

/** What a bank holds, counted, in Hindsight's `stats` shape. */
export async function bankStats(
  s: Deps<BankStore & OperationStore & StatsStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
) {
  const pay = await aggregateFare(s, projectId, bankId);
  const st = await s.store.bankStats(projectId, bankId, pay);
  const ops = await s.store.countOperations(projectId, bankId, {});
  const byLinkType: Record<string, number> = {};
  const byFactType: Record<string, number> = {};
  const breakdown: Record<string, Record<string, number>> = {};
  for (const l of st.links) {
    byLinkType[l.link_type] = (byLinkType[l.link_type] ?? 0) + l.n;
    byFactType[l.fact_type] = (byFactType[l.fact_type] ?? 0) + l.n;
    breakdown[l.fact_type] = { ...breakdown[l.fact_type], [l.link_type]: l.n };
  }
  return {
    bank_id: bankId,
    total_nodes: sum(Object.values(st.memoriesByType)),
    total_links: sum(Object.values(byLinkType)),
    total_documents: st.documents,
    nodes_by_fact_type: st.memoriesByType,
    links_by_link_type: byLinkType,
    links_by_fact_type: byFactType,
    links_breakdown: breakdown,
    pending_operations: (ops.pending ?? 0) + (ops.processing ?? 0),
    failed_operations: ops.failed ?? 0,
    operations_by_status: ops,
    last_consolidated_at: st.lastConsolidatedAt,
    last_memory_write_at: st.lastMemoryAt,
    pending_consolidation: st.pendingConsolidation,
    total_observations: st.memoriesByType.observation ?? 0,
  };
}

const STEP_SECONDS = { minute: 60, hour: 3600, day: 86_400 } as const;
const TIME_FIELDS: readonly TimeField[] = ['created_at', 'mentioned_at', 'occurred_start'];

/**
 * Memories of the bank over the last `period`, counted by fact type in buckets (minutes, hours
 * or UTC days); every bucket of the period is listed, the current one last. An unknown
 * `time_field` counts by `created_at`, as Hindsight does.
 */
export async function memoriesTimeseries(
  s: Deps<BankStore & StatsStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  q: { period?: TimeseriesPeriod; time_field?: string },
) {
  const pay = await aggregateFare(s, projectId, bankId);
  const w = periodWindow(s.now(), q.period);
  const field = TIME_FIELDS.find((f) => f === q.time_field) ?? 'created_at';
  const rows = await s.store.memoryTimeseries(projectId, bankId, { field, ...w.range }, pay);
  const buckets = w.buckets(
    () => Object.fromEntries(FACT_TYPES.map((t) => [t, 0])) as Record<FactType, number>,
  );
  for (const r of rows) {
    const b = w.bucketOf(buckets, r.bucket);
    const type = FACT_TYPES.find((t) => t === r.type);
    if (b && type) b[type] += r.n;
  }
  return { bank_id: bankId, period: w.period, trunc: w.trunc, time_field: field, buckets };
}

/**
 * The buckets of the last `period` (default 7d) up to `now`: minutes, hours or UTC days, the
 * current one last. `range` is what a store counts over; `bucketOf` finds a counted row's bucket.
 */
export function periodWindow(now: Date, period: TimeseriesPeriod = '7d') {
  const { seconds, trunc } = TIMESERIES_PERIODS[period];
  const step = STEP_SECONDS[trunc];
  const count = seconds / step;
  const current = Math.floor(now.getTime() / 1000 / step) * step;
  const first = current - (count - 1) * step;
  return {
    period,
    trunc,
    start: new Date(first * 1000),
    range: { from: new Date(first * 1000), to: new Date((current + step) * 1000), stepSeconds: step },
    /** Every bucket of the period, oldest first, each with `time` and what `init` gives it. */
    buckets<T extends object>(init: () => T): (T & { time: Date })[] {
      return Array.from({ length: count }, (_, i) => ({
        time: new Date((first + i * step) * 1000),
        ...init(),
      }));
    },
    bucketOf<T>(buckets: T[], at: Date): T | undefined {
      return buckets[Math.round((at.getTime() / 1000 - first) / step)];
    },
  };
}

/** `*` stands for any text; everything else in the pattern matches itself (LIKE's own wildcards too). */
export function tagPattern(q: string): string {
  return q.replace(/[\\%_]/g, '\\$&').replaceAll('*', '%');
}

/** The bank's tags with how many memories (or mental models) carry each, most used first. */
export async function listTags(
  s: Deps<BankStore & StatsStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  q: { q?: string; source?: 'memories' | 'mental_models'; limit?: number; offset?: number },
) {
  const pay = await aggregateFare(s, projectId, bankId, q.source !== 'mental_models');
  const limit = q.limit ?? 100;
  const offset = q.offset ?? 0;
  const page = await s.store.tagCounts(
    projectId,
    bankId,
    { like: q.q ? tagPattern(q.q) : undefined, source: q.source, limit, offset },
    pay,
  );
  return { ...page, limit, offset };
}
