import { createRoute } from '@hono/zod-openapi';
import { bankProfile, requireBank } from '../../core/banks.js';
import {
  clearMemories,
  clearObservations,
  getChunk,
  observationScopes,
  resetConfig,
  setBackground,
  setDisposition,
  setDocumentTags,
} from '../../core/bank-upkeep.js';
import { probeBankLlm } from '../../core/llm-health.js';
import { entityDetail } from '../../core/entity-views.js';
import { authOf, guard } from '../auth.js';
import { BankConfigView } from '../../contract/banks.js';
import {
  BackgroundBody,
  BackgroundResponse,
  ChunkParams,
  ClearedMemories,
  ClearedObservations,
  ClearMemoriesQuery,
  DispositionBody,
  DocumentTagsBody,
  DocumentTagsResult,
  LlmHealth,
  ObservationScopes,
} from '../../contract/bank-upkeep.js';
import { DocumentParams } from '../../contract/documents.js';
import { BankParam } from '../../contract/common.js';
import { Chunk, EntityDetail, EntityParams } from '../../contract/graph.js';
import { HindsightProfile, hindsightProfile } from './hindsight.js';
import { jsonBody, ok } from './openapi.js';
import { inBank, router, send, servicesOf } from './router.js';

/**
 * Upkeep of a bank as Hindsight's client does it: reset its config, set its disposition or
 * background (older calls), clear its memories, "regenerate" an entity.
 */
export const bankUpkeepRoutes = router()
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/config',
      tags: ['Banks'],
      summary: 'Reset bank config',
      description:
        'Removes every override, so each setting is its default again — except `encryption`: resetting it would decrypt the bank (set it with `PATCH .../config`).',
      middleware: [guard('banks.config.update')] as const,
      request: { params: BankParam },
      responses: ok(BankConfigView),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      return send(c, await resetConfig(s, bank, { masterKeySet: !!c.get('config').masterKey }));
    },
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/banks/{bank}/profile',
      tags: ['Banks'],
      summary: 'Set the disposition (Hindsight’s older call)',
      description: 'The three traits, 1–5 each; the same as `PATCH .../config` with `disposition_*`.',
      middleware: [guard('banks.config.update')] as const,
      request: { params: BankParam, ...jsonBody(DispositionBody) },
      responses: ok(HindsightProfile),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      const updated = await setDisposition(s, bank, c.req.valid('json').disposition, {
        masterKeySet: !!c.get('config').masterKey,
      });
      return send(c, hindsightProfile(updated, await bankProfile(s, updated)));
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/background',
      tags: ['Banks'],
      summary: 'Set the mission (Hindsight’s older `background` call)',
      description: 'Replaces the mission with `content`; blank clears it.',
      middleware: [guard('banks.identity.update')] as const,
      request: { params: BankParam, ...jsonBody(BackgroundBody) },
      responses: ok(BackgroundResponse),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      return send(c, await setBackground(s, bank, c.req.valid('json').content));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/memories',
      tags: ['Memories'],
      summary: 'Clear the bank’s memories',
      description:
        'Deletes every memory of the bank (of one fact type with `?type=`) and the documents left without one; the bank, its config and directives stay.',
      middleware: [guard('memories.clear')] as const,
      request: { params: BankParam, query: ClearMemoriesQuery },
      responses: ok(ClearedMemories),
    }),
    async (c) => send(c, await clearMemories(...inBank(c), c.req.valid('query').type)),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/entities/{entity_id}/regenerate',
      tags: ['Graph'],
      summary: 'An entity, read afresh (Hindsight’s deprecated regenerate)',
      description:
        'mnemo keeps no summary of an entity to regenerate: the answer is read from its memories now, as `GET` reads it.',
      middleware: [guard('entities.get')] as const,
      request: { params: EntityParams },
      responses: ok(EntityDetail),
    }),
    async (c) => send(c, await entityDetail(...inBank(c), c.req.valid('param').entity_id)),
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/observations',
      tags: ['Reflect'],
      summary: 'Clear the observations',
      description:
        'Deletes the observations consolidation wrote (observations a client retained itself stay) and rewinds consolidation: its next run rebuilds them from every memory.',
      middleware: [guard('observations.clear')] as const,
      request: { params: BankParam },
      responses: ok(ClearedObservations),
    }),
    async (c) => send(c, await clearObservations(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/observations/scopes',
      tags: ['Reflect'],
      summary: 'Observation scopes',
      description:
        'The tag sets observations were consolidated under, with how many each, most populous first.',
      middleware: [guard('observations.list')] as const,
      request: { params: BankParam },
      responses: ok(ObservationScopes),
    }),
    async (c) => send(c, await observationScopes(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}/documents/{document_id}',
      tags: ['Documents'],
      summary: 'Set a document’s tags',
      description:
        'Every memory of the document gets `tags` (null or absent: none). Observations already made from them keep theirs.',
      middleware: [guard('documents.update')] as const,
      request: { params: DocumentParams, ...jsonBody(DocumentTagsBody) },
      responses: ok(DocumentTagsResult),
    }),
    async (c) => {
      const { document_id } = c.req.valid('param');
      const tags = c.req.valid('json').tags ?? [];
      return send(c, await setDocumentTags(...inBank(c), document_id, tags));
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/health/llm',
      tags: ['Banks'],
      summary: 'Probe the language model',
      description:
        'One minimal call to the model the bank’s Retain, consolidation and Reflect use (the server’s one model), metered like any other. Answers only whether it answered: never the provider, model, address, key or error text.',
      middleware: [guard('banks.llm.probe')] as const,
      request: { params: BankParam },
      responses: ok(LlmHealth),
    }),
    async (c) => send(c, await probeBankLlm(...inBank(c))),
  );

/** A document's piece by its id alone (Hindsight's path has no bank). */
export const chunkRoutes = router().openapi(
  createRoute({
    method: 'get',
    path: '/chunks/{chunk_id}',
    tags: ['Documents'],
    summary: 'Get a chunk',
    description: 'A piece of a document by its id (the memory holding it), in whichever bank of the project.',
    middleware: [guard('documents.get')] as const,
    request: { params: ChunkParams },
    responses: ok(Chunk),
  }),
  async (c) => send(c, await getChunk(servicesOf(c), authOf(c).projectId, c.req.valid('param').chunk_id)),
);
