import { createRoute } from '@hono/zod-openapi';
import { bankAuditStats, listBankAudit, listLlmRequests, llmRequestStats } from '../../core/ledgers.js';
import { guard } from '../auth.js';
import { AuditLogList, AuditLogQuery, AuditLogStats, AuditLogStatsQuery } from '../../contract/audit-logs.js';
import { BankParam } from '../../contract/common.js';
import {
  LlmRequestList,
  LlmRequestQuery,
  LlmRequestStats,
  LlmRequestStatsQuery,
} from '../../contract/llm-requests.js';
import { ok } from './openapi.js';
import { inBank, router, send } from './router.js';

/** What happened to a bank: its audit log and the language model calls made for it. */
export const ledgerRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/audit-logs',
      tags: ['Audit'],
      summary: 'List a bank’s audit log',
      description:
        'The bank’s audit entries (every mutating request and every 401/403 naming it), newest first; by `offset` (up to 10,000) or `cursor`. `total` counts up to 10,000 matching entries.',
      middleware: [guard('banks.audit.list')] as const,
      request: { params: BankParam, query: AuditLogQuery },
      responses: ok(AuditLogList),
    }),
    async (c) => send(c, await listBankAudit(...inBank(c), c.req.valid('query'))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/audit-logs/stats',
      tags: ['Audit'],
      summary: 'A bank’s audit log over time',
      description:
        'Requests per action in buckets over the last `period`; every bucket is listed, the current one last.',
      middleware: [guard('banks.audit.stats')] as const,
      request: { params: BankParam, query: AuditLogStatsQuery },
      responses: ok(AuditLogStats),
    }),
    async (c) => send(c, await bankAuditStats(...inBank(c), c.req.valid('query'))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/llm-requests',
      tags: ['LLM requests'],
      summary: 'List a bank’s model calls',
      description:
        'Every language model call made for the bank (Retain extraction, Reflect, consolidation, the probe): purpose, model, tokens, duration and outcome, newest first. No prompt or answer is kept. The newest 10,000 calls of each bank are kept.',
      middleware: [guard('banks.llm_requests.list')] as const,
      request: { params: BankParam, query: LlmRequestQuery },
      responses: ok(LlmRequestList),
    }),
    async (c) => send(c, await listLlmRequests(...inBank(c), c.req.valid('query'))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/llm-requests/stats',
      tags: ['LLM requests'],
      summary: 'A bank’s model calls over time',
      description:
        'Calls by outcome with token sums in buckets over the last `period` (every bucket listed), and the period’s totals by purpose and outcome.',
      middleware: [guard('banks.llm_requests.stats')] as const,
      request: { params: BankParam, query: LlmRequestStatsQuery },
      responses: ok(LlmRequestStats),
    }),
    async (c) => send(c, await llmRequestStats(...inBank(c), c.req.valid('query'))),
  );
