import { createRoute, z } from '@hono/zod-openapi';
import { retainAsync } from '../../core/retain/retain-async.js';
import { AsyncRetainResponse } from '../../contract/operations.js';
import { withEntities } from '../../core/entity-views.js';
import { recall } from '../../core/recall/recall.js';
import { retain } from '../../core/retain/retain.js';
import { deleteMemory, listMemories } from '../../core/memories.js';
import { clearMemoryObservations, curateMemory } from '../../core/curation.js';
import { authOf, guard } from '../auth.js';
import { itemwise } from '../itemwise.js';
import { BankParam, toDate } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import {
  ClearedMemoryObservations,
  DeletedMemory,
  MemoryPatchBody,
  MemoryRecord,
  ListMemoriesQuery,
  MemoryPage,
  MemoryParams,
  RecallBody,
  RecallResponse,
  RetainBody,
  RetainQuery,
  RetainResponse,
} from '../../contract/memories.js';
import { inBank, router, send, servicesOf } from './router.js';

/** Retain, Recall, list and delete memories. */
export const memoryRoutes = router()
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/memories',
      tags: ['Memories'],
      summary: 'Retain memories',
      description:
        'Stores one or more items in the bank (created on first use). `?space=` attaches a new bank. With `async: true` the items are queued as an operation.',
      middleware: [guard('memories.retain')] as const,
      request: { params: BankParam, query: RetainQuery, ...jsonBody(itemwise(RetainBody, 'items')) },
      responses: ok(z.union([RetainResponse, AsyncRetainResponse])),
    }),
    async (c) => {
      const { bank } = c.req.valid('param');
      const body = c.req.valid('json');
      const req = {
        document_id: body.document_id,
        space: c.req.valid('query').space,
        items: body.items.map((it) => ({ ...it, timestamp: toDate(it.timestamp) })),
      };
      const s = servicesOf(c);
      const { projectId } = authOf(c);
      if (body.async)
        return send(c, await retainAsync(s, projectId, bank, req, { operationId: body.operation_id }));
      return send(c, await retain(s, projectId, bank, req, { seed: c.get('idempotencySeed') }));
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/memories/recall',
      tags: ['Memories'],
      summary: 'Recall memories',
      description:
        'Hybrid retrieval (semantic, keyword, graph, temporal), fused and reranked, cut to `max_tokens`.',
      middleware: [guard('memories.recall')] as const,
      request: { params: BankParam, ...jsonBody(RecallBody) },
      responses: ok(RecallResponse),
    }),
    async (c) => {
      const { bank } = c.req.valid('param');
      const { include, ...b } = c.req.valid('json');
      const s = servicesOf(c);
      const { projectId, banks } = authOf(c);
      const result = await recall(
        s,
        projectId,
        bank,
        {
          ...b,
          query_timestamp: toDate(b.query_timestamp),
          temporal_window: b.temporal_window && {
            start: new Date(b.temporal_window.start),
            end: new Date(b.temporal_window.end),
          },
        },
        { banks },
      );
      // Hindsight's `entities` section, on unless asked away (`include.entities: null`).
      const wanted = include?.entities === undefined ? {} : include.entities;
      return send(
        c,
        await withEntities(s, projectId, bank, result, wanted ? (wanted.max_tokens ?? 500) : null),
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/memories',
      tags: ['Memories'],
      summary: 'List memories',
      description: 'Newest first, paged by `cursor`.',
      middleware: [guard('memories.list')] as const,
      request: { params: BankParam, query: ListMemoriesQuery },
      responses: ok(MemoryPage),
    }),
    async (c) => {
      const { bank } = c.req.valid('param');
      const q = c.req.valid('query');
      const page = await listMemories(
        servicesOf(c),
        authOf(c).projectId,
        bank,
        {
          types: q.type ? [q.type] : undefined,
          tags: q.tags
            ? q.tags
                .split(',')
                .map((t) => t.trim())
                .filter(Boolean)
            : undefined,
          tagsMatch: q.tags_match,
          documentId: q.document_id,
          q: q.q,
          state: q.state ?? 'all',
        },
        { limit: q.limit ?? 50, cursor: q.cursor },
      );
      return send(c, page);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/memories/{id}',
      tags: ['Memories'],
      summary: 'Delete a memory',
      middleware: [guard('memories.delete')] as const,
      request: { params: MemoryParams },
      responses: ok(DeletedMemory),
    }),
    async (c) => send(c, await deleteMemory(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}/memories/{id}',
      tags: ['Memories'],
      summary: 'Curate a memory',
      description:
        'Invalidates a memory (`state: invalidated`, with an optional `reason`): it is kept, listed and restorable, but Recall, Reflect and consolidation leave it out. `state: valid` restores it. `text` and the other fields edit it, its keyword postings, entities and vector rebuilt in the same transaction. Either way the observations derived from it are deleted and it is consolidated again. Observations consolidation wrote are derived and cannot be curated (400). Answers the memory as it now is.',
      middleware: [guard('memories.update')] as const,
      request: { params: MemoryParams, ...jsonBody(MemoryPatchBody) },
      responses: ok(MemoryRecord),
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const b = c.req.valid('json');
      const date = (v: string | null | undefined): Date | '' | undefined =>
        v === null || v === undefined ? undefined : v === '' ? '' : new Date(v);
      const patch = {
        text: b.text ?? undefined,
        context: b.context === null ? undefined : b.context === '' ? null : b.context,
        occurred_start: date(b.occurred_start),
        occurred_end: date(b.occurred_end),
        fact_type: b.fact_type ?? undefined,
        entities: b.entities ?? undefined,
        resolve_entities: b.resolve_entities,
        state: b.state ?? undefined,
        reason: b.reason ?? undefined,
      };
      return send(c, await curateMemory(...inBank(c), id, patch));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/memories/{id}/observations',
      tags: ['Memories'],
      summary: 'Clear a memory’s observations',
      description:
        'Deletes the observations consolidation derived from this memory and queues it, with the other memories those observations came from, to be consolidated again (one run is scheduled). Only those memories are read again, not every memory after them.',
      middleware: [guard('memories.observations.clear')] as const,
      request: { params: MemoryParams },
      responses: ok(ClearedMemoryObservations),
    }),
    async (c) => send(c, await clearMemoryObservations(...inBank(c), c.req.valid('param').id)),
  );
