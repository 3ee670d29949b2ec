import type { Db } from '../db.js';
import { fencedWrite } from '../fence.js';
import { decodeCursor, encodeCursor } from './filters.js';
import { countRows, type OrderKey, type PayHops, rowsIn, skipRows, walkPage } from './offset-walk.js';

/** One language model call: what it was for, which model, tokens, time and outcome; never text. */
export interface LlmCallRecord {
  started_at: Date;
  /** What the call served: retain, reflect, consolidation, probe. */
  operation: string;
  /** The step within it: extraction, answer, plan… */
  scope: string;
  provider: string;
  model: string;
  status: 'success' | 'error';
  /** The error's kind (timeout, rate_limited, provider_error, bad_response, network, aborted). */
  error: string | null;
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
  /** The operation the call ran in, when it ran in one. */
  trace_id: string | null;
}

export interface LlmRequestFilter {
  status?: string;
  operation?: string;
  scope?: string;
  provider?: string;
  trace_id?: string;
  since?: Date;
  until?: Date;
}

/** The language model calls made for each bank (Hindsight's LLM request traces). */
export interface LlmRequestStore {
  /**
   * Adds the calls' tokens to the bank's usage and records them, then drops the bank's calls
   * older than its newest `keep`: one statement, under the bank's row lock (which numbers the
   * calls). Nothing is written when the bank is gone.
   */
  recordLlmCalls(
    projectId: string,
    bankId: string,
    calls: readonly LlmCallRecord[],
    keep: number,
  ): Promise<void>;
  /** The bank's calls, newest first, by offset or after a cursor; `total` counts the matching ones. */
  listLlmRequests(
    projectId: string,
    bankId: string,
    filter: LlmRequestFilter,
    page: { limit: number; offset: number; cursor?: string; pay?: PayHops },
  ): Promise<{ items: (LlmCallRecord & { id: string })[]; total: number; next_cursor: string | null }>;
  /** Calls of [from, to) counted by bucket of `stepSeconds`, operation, scope and status, with token sums. */
  llmRequestBuckets(
    projectId: string,
    bankId: string,
    q: { operation?: string; from: Date; to: Date; stepSeconds: number },
  ): Promise<LlmBucketRow[]>;
}

export interface LlmBucketRow {
  bucket: Date;
  operation: string;
  scope: string;
  status: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
}

/**
 * The filter's conditions after `project_id = $1 AND bank_id = $2` (which every statement
 * writes out, one bank), each with its parameter pushed onto `params`.
 */
function where(projectId: string, bankId: string, f: LlmRequestFilter, params: unknown[]): string {
  params.push(projectId, bankId);
  return conditions(f, params);
}

/** The filter's conditions (` AND …`), their parameters pushed to `params`. */
function conditions(f: LlmRequestFilter, params: unknown[]): string {
  let conds = '';
  const add = (sql: string, v: unknown) => {
    params.push(v);
    conds += ` AND ${sql.replace('?', `$${params.length}`)}`;
  };
  for (const col of ['status', 'operation', 'scope', 'provider', 'trace_id'] as const)
    if (f[col] !== undefined) add(`${col} = ?`, f[col]);
  if (f.since) add('started_at >= ?', f.since);
  if (f.until) add('started_at < ?', f.until);
  return conds;
}

const COLUMNS =
  'seq::int8 AS seq, started_at, operation, scope, provider, model, status, error, duration_ms, input_tokens, output_tokens, trace_id';

/** The ledger's order, newest first (its primary key). */
const NEWEST: OrderKey[] = [{ expr: 'seq', type: 'bigint', desc: true }];

export function llmRequestQueries(db: Db): LlmRequestStore {
  return {
    async recordLlmCalls(projectId, bankId, calls, keep) {
      if (calls.length === 0) return;
      let input = 0;
      let output = 0;
      for (const c of calls) {
        input += c.input_tokens;
        output += c.output_tokens;
      }
      const rows = calls.map((c, i) => ({ ...c, n: i + 1, started_at: c.started_at.toISOString() }));
      // A job's calls are recorded only while its bank is the one it ran for (store/fence.ts).
      await fencedWrite(db, projectId, bankId, (q) =>
        q.query(
          `WITH b AS (
           UPDATE banks SET llm_input_tokens = llm_input_tokens + $3, llm_output_tokens = llm_output_tokens + $4,
                  llm_request_seq = llm_request_seq + $5
            WHERE project_id = $1 AND id = $2
            RETURNING llm_request_seq AS last),
         ins AS (
           INSERT INTO llm_requests (project_id, bank_id, seq, started_at, operation, scope, provider, model,
                                     status, error, duration_ms, input_tokens, output_tokens, trace_id)
           SELECT $1, $2, b.last - $5 + c.n, c.started_at, c.operation, c.scope, c.provider, c.model,
                  c.status, c.error, c.duration_ms, c.input_tokens, c.output_tokens, c.trace_id
             FROM b, jsonb_to_recordset($6::jsonb) AS c(n int8, started_at timestamptz, operation text,
                  scope text, provider text, model text, status text, error text, duration_ms int,
                  input_tokens int, output_tokens int, trace_id text))
         DELETE FROM llm_requests d USING b
          WHERE d.project_id = $1 AND d.bank_id = $2 AND d.seq <= b.last - $7`,
          [projectId, bankId, input, output, calls.length, JSON.stringify(rows), keep],
        ),
      );
    },

    async listLlmRequests(projectId, bankId, filter, page) {
      const total = await countRows(
        db,
        {
          from: 'llm_requests',
          where: 'project_id = $1 AND bank_id = $2',
          params: [projectId, bankId],
          order: NEWEST,
        },
        (p) => `true${conditions(filter, p)}`,
        page.pay,
      );
      const filtered = conditions(filter, []) !== '';
      const params: unknown[] = [projectId, bankId];
      let cond = filtered ? '' : conditions(filter, params);
      const after = decodeCursor(page.cursor);
      if (after !== null) {
        params.push(after);
        cond += ` AND seq < $${params.length}`;
      }
      const offset = after !== null ? 0 : page.offset;
      const listing = {
        from: 'llm_requests',
        where: `project_id = $1 AND bank_id = $2${cond}`,
        params,
        order: NEWEST,
      };
      let rows: (LlmCallRecord & { seq: number })[];
      if (filtered) {
        // Found in bounded hops over the bank's calls, the filter applied in each (a status no
        // call has reads no more per statement than a common one), then read by their keys.
        const keys = await walkPage(
          db,
          listing,
          (p) => `true${conditions(filter, p)}`,
          offset,
          page.limit + 1,
          page.pay,
        );
        const byKeys: unknown[] = [projectId, bankId];
        rows = await db.query<LlmCallRecord & { seq: number }>(
          `SELECT ${COLUMNS} FROM llm_requests WHERE project_id = $1 AND bank_id = $2${rowsIn(NEWEST, keys, byKeys)}
            ORDER BY seq DESC`,
          byKeys,
        );
      } else {
        cond += await skipRows(db, listing, offset, page.pay);
        params.push(page.limit + 1);
        rows = await db.query<LlmCallRecord & { seq: number }>(
          `SELECT ${COLUMNS} FROM llm_requests WHERE project_id = $1 AND bank_id = $2${cond}
            ORDER BY seq DESC LIMIT $${params.length}`,
          params,
        );
      }
      const more = rows.length > page.limit;
      return {
        items: rows.slice(0, page.limit).map(({ seq, ...r }) => ({ id: String(seq), ...r })),
        total,
        next_cursor: more ? encodeCursor(Number(rows[page.limit - 1]!.seq)) : null,
      };
    },

    async llmRequestBuckets(projectId, bankId, q) {
      const params: unknown[] = [];
      const cond = where(projectId, bankId, { operation: q.operation, since: q.from, until: q.to }, params);
      params.push(q.stepSeconds);
      const step = `$${params.length}`;
      const rows = await db.query<Omit<LlmBucketRow, 'bucket'> & { bucket: number }>(
        `SELECT floor(extract(epoch FROM started_at) / ${step})::float8 * ${step} AS bucket,
                operation, scope, status, count(*)::int AS calls,
                sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens,
                sum(duration_ms)::float8 AS duration_ms
           FROM llm_requests WHERE project_id = $1 AND bank_id = $2${cond} GROUP BY 1, 2, 3, 4`,
        params,
      );
      return rows.map((r) => ({
        ...r,
        bucket: new Date(Number(r.bucket) * 1000),
        input_tokens: Number(r.input_tokens),
        output_tokens: Number(r.output_tokens),
        duration_ms: Number(r.duration_ms),
      }));
    },
  };
}
