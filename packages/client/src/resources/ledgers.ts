import { ACTIONS } from '../../../../src/contract/actions.js';
import type { RequestOptions, Transport } from '../http.js';
import { PagedList } from '../pagination.js';
import type {
  AuditLogEntry,
  AuditLogList,
  AuditLogListParams,
  AuditLogStats,
  AuditLogStatsParams,
  BankTemplateImportResult,
  BankTemplateManifest,
  LlmRequestEntry,
  LlmRequestList,
  LlmRequestListParams,
  LlmRequestStats,
  LlmRequestStatsParams,
} from '../types.js';
import { bankPath } from './paths.js';

/** One bank's audit log (Hindsight's audit-logs), newest first. Needs `admin`. */
export class BankAuditResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** `await` for one page (`offset` or `cursor`), `for await` for every entry. */
  list(
    bank: string,
    params: AuditLogListParams = {},
    options?: RequestOptions,
  ): PagedList<AuditLogEntry, AuditLogList> {
    const { cursor, ...filters } = params;
    return new PagedList(
      (c) =>
        this.t.request<AuditLogList>('GET', bankPath(this.prefix, bank, '/audit-logs'), {
          query: { ...filters, cursor: c },
          options,
        }),
      cursor,
    );
  }

  /** Requests per action in buckets over the last `period` (default 7d). */
  stats(bank: string, params: AuditLogStatsParams = {}, options?: RequestOptions): Promise<AuditLogStats> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/audit-logs/stats'), {
      query: params,
      options,
    });
  }
}

/**
 * The language model calls made for a bank: purpose, model, tokens, duration and outcome (never
 * a prompt or an answer); the newest 10,000 per bank are kept. Needs `admin`.
 */
export class LlmRequestsResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** Newest first: `await` for one page, `for await` for every call. */
  list(
    bank: string,
    params: LlmRequestListParams = {},
    options?: RequestOptions,
  ): PagedList<LlmRequestEntry, LlmRequestList> {
    const { cursor, ...filters } = params;
    return new PagedList(
      (c) =>
        this.t.request<LlmRequestList>('GET', bankPath(this.prefix, bank, '/llm-requests'), {
          query: { ...filters, cursor: c },
          options,
        }),
      cursor,
    );
  }

  /** Calls by outcome with token sums per bucket, and the period's totals per purpose and outcome. */
  stats(
    bank: string,
    params: LlmRequestStatsParams = {},
    options?: RequestOptions,
  ): Promise<LlmRequestStats> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/llm-requests/stats'), {
      query: params,
      options,
    });
  }
}

/** Bank templates: a bank's settings, mission and directives as a manifest. Needs `admin`. */
export class TemplatesResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  export(bank: string, options?: RequestOptions): Promise<BankTemplateManifest> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/export'), { options });
  }

  /**
   * Applies a manifest (all or nothing), creating the bank when missing; `dryRun` answers what
   * would change and changes nothing.
   */
  import(
    bank: string,
    manifest: BankTemplateManifest,
    params: { dryRun?: boolean } = {},
    options?: RequestOptions,
  ): Promise<BankTemplateImportResult> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/import'), {
      body: manifest,
      query: params.dryRun ? { dry_run: 'true' } : undefined,
      options,
      // A dry run changes nothing: no Idempotency-Key.
      read: params.dryRun ? true : ACTIONS['banks.template.import'].read,
    });
  }

  /** The manifest's JSON Schema (no key needed). */
  schema(options?: RequestOptions): Promise<Record<string, unknown>> {
    return this.t.request('GET', '/v1/bank-template-schema', { options });
  }
}
