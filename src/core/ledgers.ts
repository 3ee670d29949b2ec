import { walkFare } from './budgets.js';
import { AUDIT_COUNT_CAP } from '../contract/audit-logs.js';
import type { TimeseriesPeriod } from '../contract/stats.js';
import type {
  AuditTransport,
  BankAuditStore,
  BankStore,
  LimitStore,
  LlmRequestStore,
} from '../store/store.js';
import { requireBank } from './banks.js';
import type { Deps } from './services.js';
import { periodWindow } from './stats.js';

const DEFAULT_LIMIT = 50;
const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));

interface PageQuery {
  limit?: number;
  offset?: number;
  cursor?: string;
  start_date?: string;
  end_date?: string;
}

/** A bank's audit log, newest first, in Hindsight's shape beside mnemo's fields. */
export async function listBankAudit(
  s: Deps<BankAuditStore & BankStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  q: PageQuery & { action?: string; transport?: AuditTransport },
) {
  await requireBank(s, projectId, bankId);
  const limit = q.limit ?? DEFAULT_LIMIT;
  const offset = q.cursor ? 0 : (q.offset ?? 0);
  const page = await s.store.listBankAudit(
    projectId,
    bankId,
    { action: q.action, transport: q.transport, since: date(q.start_date), until: date(q.end_date) },
    { limit, offset, cursor: q.cursor, countCap: AUDIT_COUNT_CAP, pay: walkFare(s, projectId) },
  );
  return {
    bank_id: bankId,
    total: page.total,
    total_capped: page.capped,
    limit,
    offset,
    items: page.items.map((e) => ({
      ...e,
      started_at: e.at,
      ended_at: e.at,
      duration_ms: null,
      request: null,
      response: null,
      metadata: {},
    })),
    next_cursor: page.next_cursor,
  };
}

/** Requests per action of a bank's audit log over the period, every bucket listed. */
export async function bankAuditStats(
  s: Deps<BankAuditStore & BankStore, 'now'>,
  projectId: string,
  bankId: string,
  q: { action?: string; period?: TimeseriesPeriod },
) {
  await requireBank(s, projectId, bankId);
  const w = periodWindow(s.now(), q.period);
  const rows = await s.store.bankAuditBuckets(projectId, bankId, { action: q.action, ...w.range });
  const buckets = w.buckets(() => ({ actions: {} as Record<string, number>, total: 0 }));
  for (const r of rows) {
    const b = w.bucketOf(buckets, r.bucket);
    if (!b) continue;
    b.actions[r.action] = (b.actions[r.action] ?? 0) + r.n;
    b.total += r.n;
  }
  return { bank_id: bankId, period: w.period, trunc: w.trunc, start: w.start, buckets };
}

/** A bank's model calls, newest first, in Hindsight's trace shape: no prompt, no answer. */
export async function listLlmRequests(
  s: Deps<BankStore & LimitStore & LlmRequestStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  q: PageQuery & {
    status?: string;
    operation?: string;
    scope?: string;
    provider?: string;
    trace_id?: string;
  },
) {
  await requireBank(s, projectId, bankId);
  const limit = q.limit ?? DEFAULT_LIMIT;
  const offset = q.cursor ? 0 : (q.offset ?? 0);
  const { start_date, end_date, ...filter } = q;
  const page = await s.store.listLlmRequests(
    projectId,
    bankId,
    { ...filter, since: date(start_date), until: date(end_date) },
    { limit, offset, cursor: q.cursor, pay: walkFare(s, projectId) },
  );
  return {
    bank_id: bankId,
    total: page.total,
    limit,
    offset,
    items: page.items.map((c) => ({
      id: c.id,
      bank_id: bankId,
      operation: c.operation,
      scope: c.scope,
      trace_id: c.trace_id,
      span_id: null,
      parent_span_id: null,
      provider: c.provider,
      model: c.model,
      status: c.status,
      started_at: c.started_at,
      ended_at: new Date(c.started_at.getTime() + c.duration_ms),
      duration_ms: c.duration_ms,
      input_tokens: c.input_tokens,
      output_tokens: c.output_tokens,
      cached_tokens: null,
      total_tokens: c.input_tokens + c.output_tokens,
      input: null,
      output: null,
      error: c.error,
      llm_info: {},
      metadata: {},
    })),
    next_cursor: page.next_cursor,
  };
}

/** A bank's model calls over the period: per bucket by outcome with tokens, and per purpose. */
export async function llmRequestStats(
  s: Deps<BankStore & LlmRequestStore, 'now'>,
  projectId: string,
  bankId: string,
  q: { operation?: string; period?: TimeseriesPeriod },
) {
  await requireBank(s, projectId, bankId);
  const w = periodWindow(s.now(), q.period);
  const rows = await s.store.llmRequestBuckets(projectId, bankId, { operation: q.operation, ...w.range });
  const buckets = w.buckets(() => ({
    statuses: {} as Record<string, number>,
    total: 0,
    tokens: { input: 0, output: 0, cached: 0, total: 0 },
  }));
  const totals = new Map<
    string,
    {
      operation: string;
      scope: string;
      status: 'success' | 'error';
      calls: number;
      input_tokens: number;
      output_tokens: number;
      ms: number;
    }
  >();
  for (const r of rows) {
    const b = w.bucketOf(buckets, r.bucket);
    if (!b) continue;
    b.statuses[r.status] = (b.statuses[r.status] ?? 0) + r.calls;
    b.total += r.calls;
    b.tokens.input += r.input_tokens;
    b.tokens.output += r.output_tokens;
    b.tokens.total += r.input_tokens + r.output_tokens;
    const key = `${r.operation}\u0000${r.scope}\u0000${r.status}`;
    const t = totals.get(key) ?? {
      operation: r.operation,
      scope: r.scope,
      status: r.status === 'error' ? 'error' : 'success',
      calls: 0,
      input_tokens: 0,
      output_tokens: 0,
      ms: 0,
    };
    t.calls += r.calls;
    t.input_tokens += r.input_tokens;
    t.output_tokens += r.output_tokens;
    t.ms += r.duration_ms;
    totals.set(key, t);
  }
  return {
    bank_id: bankId,
    period: w.period,
    trunc: w.trunc,
    start: w.start,
    buckets,
    totals: [...totals.values()]
      .sort((a, b) => b.calls - a.calls)
      .map(({ ms, ...t }) => ({
        ...t,
        total_tokens: t.input_tokens + t.output_tokens,
        avg_duration_ms: Math.round(ms / t.calls),
      })),
  };
}
