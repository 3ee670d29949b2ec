import { createRoute } from '@hono/zod-openapi';
import { dryRunRefresh } from '../../core/mental-model-refresh.js';
import {
  clearMentalModel,
  createMentalModel,
  deleteMentalModel,
  getMentalModel,
  listMentalModels,
  mentalModelHistory,
  requestRefresh,
  updateMentalModel,
} from '../../core/mental-models.js';
import { authOf, guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import {
  CreatedMentalModel,
  CreateMentalModelBody,
  DeletedMentalModel,
  MAX_MENTAL_MODELS,
  MentalModelDryRun,
  MentalModelHistory,
  MentalModelList,
  MentalModelListQuery,
  MentalModelParams,
  MentalModelQuery,
  MentalModelRecord,
  MentalModelRefreshQueued,
  UpdateMentalModelBody,
} from '../../contract/mental-models.js';
import { tagList } from './graph.js';
import { errorResponse, jsonBody, ok } from './openapi.js';
import { inBank, router, send, servicesOf } from './router.js';

const TAG = ['Mental models'];

/** A bank's mental models: named source queries whose Reflect answers are kept and refreshed. */
export const mentalModelRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/mental-models',
      tags: TAG,
      summary: 'List mental models',
      description: `In creation order; at most ${MAX_MENTAL_MODELS} per bank.`,
      middleware: [guard('mental_models.list')] as const,
      request: { params: BankParam, query: MentalModelListQuery },
      responses: ok(MentalModelList),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const page = await listMentalModels(...inBank(c), {
        tags: tagList(q.tags),
        tagsMatch: q.tags_match,
        detail: q.detail,
        limit: q.limit ?? MAX_MENTAL_MODELS,
        offset: q.offset ?? 0,
      });
      return send(c, page);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/mental-models',
      tags: TAG,
      summary: 'Create a mental model',
      description:
        'Keeps the model and queues its first refresh: `operation_id` finishes once its content is written.',
      middleware: [guard('mental_models.create')] as const,
      request: { params: BankParam, ...jsonBody(CreateMentalModelBody) },
      responses: {
        ...ok(CreatedMentalModel),
        409: errorResponse(`The id is taken, or the bank holds ${MAX_MENTAL_MODELS} models (\`conflict\`)`),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const made = await createMentalModel(...inBank(c), {
        ...b,
        trigger: b.trigger,
      });
      return send(c, made);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/mental-models/{id}',
      tags: TAG,
      summary: 'Get a mental model',
      middleware: [guard('mental_models.get')] as const,
      request: { params: MentalModelParams, query: MentalModelQuery },
      responses: ok(MentalModelRecord),
    }),
    async (c) => {
      const { bank, id } = c.req.valid('param');
      const m = await getMentalModel(
        servicesOf(c),
        authOf(c).projectId,
        bank,
        id,
        c.req.valid('query').detail,
      );
      return send(c, m);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}/mental-models/{id}',
      tags: TAG,
      summary: 'Update a mental model',
      description:
        'Fields left out (or null) keep their value; a trigger given is merged over the kept one. A new source query or tags leave the content stale until the next refresh.',
      middleware: [guard('mental_models.update')] as const,
      request: { params: MentalModelParams, ...jsonBody(UpdateMentalModelBody) },
      responses: ok(MentalModelRecord),
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return send(c, await updateMentalModel(...inBank(c), id, c.req.valid('json')));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/mental-models/{id}',
      tags: TAG,
      summary: 'Delete a mental model',
      description: 'With its history.',
      middleware: [guard('mental_models.delete')] as const,
      request: { params: MentalModelParams },
      responses: ok(DeletedMentalModel),
    }),
    async (c) => send(c, await deleteMentalModel(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/mental-models/{id}/history',
      tags: TAG,
      summary: 'Content history of a mental model',
      description: 'Each change of the content (refresh or clear), newest first, with what it was before.',
      middleware: [guard('mental_models.history')] as const,
      request: { params: MentalModelParams },
      responses: ok(MentalModelHistory),
    }),
    async (c) => send(c, await mentalModelHistory(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/mental-models/{id}/refresh',
      tags: TAG,
      summary: 'Refresh a mental model',
      description:
        "Queues the bank's refresh operation (or returns the one waiting): it runs the source query through Reflect and keeps the answer as the content. Charged to the project like a Reflect.",
      middleware: [guard('mental_models.refresh')] as const,
      request: { params: MentalModelParams },
      responses: ok(MentalModelRefreshQueued),
    }),
    async (c) => send(c, await requestRefresh(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/mental-models/{id}/dry-run-refresh',
      tags: TAG,
      summary: 'Preview a refresh',
      description:
        "Runs the refresh's Reflect now and shows its content beside the current one, with a unified diff; stores nothing. Charged like a Reflect.",
      middleware: [guard('mental_models.dry_run')] as const,
      request: { params: MentalModelParams },
      responses: {
        ...ok(MentalModelDryRun),
        422: errorResponse('A `response_schema` in the trigger without a language model (`llm_required`)'),
        502: errorResponse('The language model failed (`llm_error`)'),
      },
    }),
    async (c) => send(c, await dryRunRefresh(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/mental-models/{id}/clear',
      tags: TAG,
      summary: 'Clear a mental model',
      description: 'Empties the content (the history keeps it); the model is stale until its next refresh.',
      middleware: [guard('mental_models.clear')] as const,
      request: { params: MentalModelParams },
      responses: ok(MentalModelRecord),
    }),
    async (c) => send(c, await clearMentalModel(...inBank(c), c.req.valid('param').id)),
  );
