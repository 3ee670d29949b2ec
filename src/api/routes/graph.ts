import { createRoute } from '@hono/zod-openapi';
import { entityDetail, entityGraph } from '../../core/entity-views.js';
import { documentChunks, getMemory, memoryGraph, memoryHistory } from '../../core/memory-views.js';
import { guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import { DocumentParams } from '../../contract/documents.js';
import {
  ChunkPage,
  ChunkQuery,
  EntityDetail,
  EntityGraph,
  EntityGraphQuery,
  EntityParams,
  MemoryGraph,
  MemoryGraphQuery,
  MemoryHistory,
} from '../../contract/graph.js';
import { MemoryParams, MemoryRecord } from '../../contract/memories.js';
import { ok } from './openapi.js';
import { inBank, router, send } from './router.js';

/** Tags of a query string: repeated (`tags=a&tags=b`) or comma-separated. */
export const tagList = (v: string | string[] | undefined) =>
  v === undefined ? undefined : (Array.isArray(v) ? v : v.split(',')).map((t) => t.trim()).filter(Boolean);

/** Browsing a bank: its memory and entity graphs, one entity, one memory and its history, a document's pieces. */
export const graphRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/graph',
      tags: ['Graph'],
      summary: 'Memory graph',
      description:
        'The newest `limit` memories matching the filter as nodes, the links among them as edges (an observation and its sources; memories mentioning the same entities), and a table row each.',
      middleware: [guard('graph.get')] as const,
      request: { params: BankParam, query: MemoryGraphQuery },
      responses: ok(MemoryGraph),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const filter = {
        types: q.type ? [q.type] : undefined,
        q: q.q,
        tags: tagList(q.tags),
        tagsMatch: q.tags_match,
        documentId: q.document_id,
      };
      const graph = await memoryGraph(...inBank(c), filter, q.limit ?? 1000);
      return send(c, graph);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/entities/graph',
      tags: ['Graph'],
      summary: 'Entity co-occurrence graph',
      description:
        'Entities as nodes, and as edges the pairs mentioned by the same memories (at least `min_count` of them), most frequent first.',
      middleware: [guard('entities.graph')] as const,
      request: { params: BankParam, query: EntityGraphQuery },
      responses: ok(EntityGraph),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const graph = await entityGraph(...inBank(c), {
        limit: q.limit ?? 1000,
        minCount: q.min_count ?? 1,
      });
      return send(c, graph);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/entities/{entity_id}',
      tags: ['Graph'],
      summary: 'Get an entity',
      description: 'The entity and the memories that mention it (observations first, then the most recent).',
      middleware: [guard('entities.get')] as const,
      request: { params: EntityParams },
      responses: ok(EntityDetail),
    }),
    async (c) => send(c, await entityDetail(...inBank(c), c.req.valid('param').entity_id)),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/memories/{id}',
      tags: ['Memories'],
      summary: 'Get a memory',
      middleware: [guard('memories.get')] as const,
      request: { params: MemoryParams },
      responses: ok(MemoryRecord),
    }),
    async (c) => send(c, await getMemory(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/memories/{id}/history',
      tags: ['Memories'],
      summary: 'A memory’s history',
      description:
        'Oldest first: when it was retained (or written by consolidation, and last rewritten), the sources consolidation gave it, and the observations it went into. A rewrite’s earlier text is not kept.',
      middleware: [guard('memories.get')] as const,
      request: { params: MemoryParams },
      responses: ok(MemoryHistory),
    }),
    async (c) => send(c, await memoryHistory(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/documents/{document_id}/chunks',
      tags: ['Documents'],
      summary: 'A document’s pieces',
      description:
        'Its memories in the order they were retained: with the default `chunks` extraction, the document’s text in pieces; with extraction, the facts taken from it. Offset-paged.',
      middleware: [guard('documents.get')] as const,
      request: { params: DocumentParams, query: ChunkQuery },
      responses: ok(ChunkPage),
    }),
    async (c) => {
      const { document_id } = c.req.valid('param');
      const q = c.req.valid('query');
      const page = await documentChunks(...inBank(c), document_id, {
        limit: q.limit ?? 100,
        offset: q.offset ?? 0,
      });
      return send(c, page);
    },
  );
