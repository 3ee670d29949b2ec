import { createRoute } from '@hono/zod-openapi';
import { dryRunExtract } from '../../core/retain/dry-run.js';
import { guard } from '../auth.js';
import { BankParam, toDate } from '../../contract/common.js';
import { DryRunExtractBody, DryRunExtractResult } from '../../contract/extract.js';
import { errorResponse, jsonBody, ok } from './openapi.js';
import { inBank, router, send } from './router.js';

/** A preview of Retain's extraction that stores nothing. */
export const extractRoutes = router().openapi(
  createRoute({
    method: 'post',
    path: '/banks/{bank}/memories/dry-run-extract',
    tags: ['Memories'],
    summary: 'Preview extraction (stores nothing)',
    description:
      'Runs the extraction Retain would run on one item, under the bank’s settings with any `retain_*` setting of the body tried instead, and answers the facts it would store. No entity resolution, embedding or write. Without a language model the extraction is local (or verbatim chunks), as Retain’s is.',
    middleware: [guard('memories.extract')] as const,
    request: { params: BankParam, ...jsonBody(DryRunExtractBody) },
    responses: {
      ...ok(DryRunExtractResult),
      502: errorResponse('The language model failed (`llm_error`)'),
    },
  }),
  async (c) => {
    const b = c.req.valid('json');
    const result = await dryRunExtract(...inBank(c), {
      ...b,
      timestamp: b.timestamp === null ? undefined : toDate(b.timestamp),
    });
    return send(c, result);
  },
);
