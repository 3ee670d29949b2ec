import { createRoute } from '@hono/zod-openapi';
import { bankStats, listTags, memoriesTimeseries } from '../../core/stats.js';
import { guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import {
  BankStatsResponse,
  TagPage,
  TagQuery,
  TimeseriesQuery,
  TimeseriesResponse,
} from '../../contract/stats.js';
import { ok } from './openapi.js';
import { inBank, router, send } from './router.js';

/** Counts over a bank: its statistics, memories over time, its tags. */
export const statsRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/stats',
      tags: ['Banks'],
      summary: 'Bank statistics',
      description:
        'Memories by fact type, links (entity mentions, observation sources), documents, operations by status, and how far consolidation got (Hindsight’s names).',
      middleware: [guard('banks.stats')] as const,
      request: { params: BankParam },
      responses: ok(BankStatsResponse),
    }),
    async (c) => send(c, await bankStats(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/stats/memories-timeseries',
      tags: ['Banks'],
      summary: 'Memories over time',
      description:
        'Memories of the last `period` counted by fact type in buckets (a minute for 1h, an hour for 12h and 1d, a UTC day beyond); every bucket is listed, the current one last.',
      middleware: [guard('banks.stats')] as const,
      request: { params: BankParam, query: TimeseriesQuery },
      responses: ok(TimeseriesResponse),
    }),
    async (c) => send(c, await memoriesTimeseries(...inBank(c), c.req.valid('query'))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/tags',
      tags: ['Memories'],
      summary: 'List tags',
      description:
        'The distinct tags of the bank’s memories with how many carry each, most used first; `q` filters with `*` as a wildcard, in any case.',
      middleware: [guard('tags.list')] as const,
      request: { params: BankParam, query: TagQuery },
      responses: ok(TagPage),
    }),
    async (c) => send(c, await listTags(...inBank(c), c.req.valid('query'))),
  );
