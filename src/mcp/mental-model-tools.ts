import { Tags } from '../contract/common.js';
import {
  CreatedMentalModel,
  CreateMentalModelBody,
  DeletedMentalModel,
  MAX_MENTAL_MODELS,
  MentalModelList,
  MentalModelListQuery,
  MentalModelParams,
  MentalModelQuery,
  MentalModelRecord,
  MentalModelRefreshQueued,
  UpdateMentalModelBody,
} from '../contract/mental-models.js';
import {
  createMentalModel,
  deleteMentalModel,
  getMentalModel,
  listMentalModels,
  requestRefresh,
  updateMentalModel,
} from '../core/mental-models.js';
import { defineTool } from './tool.js';

/** Hindsight's name for the model's id in its tools and paths. */
const modelId = { mental_model_id: MentalModelParams.shape.id.describe('The mental model’s id') };

interface ModelJson {
  id: string;
  name: string;
  is_stale: boolean;
  refresh_pending: boolean;
  last_refreshed_at: string | null;
  content?: string | null;
}

/** One line per model: id, name, and whether its content is current. */
function modelLine(m: ModelJson): string {
  const state = m.refresh_pending
    ? 'refresh pending'
    : m.last_refreshed_at === null
      ? 'never refreshed'
      : `${m.is_stale ? 'stale, ' : ''}refreshed ${m.last_refreshed_at.slice(0, 10)}`;
  return `${m.id} "${m.name}" (${state})`;
}

export const listMentalModelsTool = defineTool({
  name: 'list_mental_models',
  title: 'List mental models',
  description:
    `A bank's mental models (named questions whose Reflect answers are kept and refreshed), in creation order; at ` +
    `most ${MAX_MENTAL_MODELS} per bank. \`detail\`: 'metadata', 'content' or 'full' (default).`,
  action: 'mental_models.list',
  annotations: { openWorldHint: false },
  bank: true,
  input: { ...MentalModelListQuery.shape, tags: Tags.optional() },
  output: MentalModelList,
  run: (ctx, a, bank) =>
    listMentalModels(ctx.services, ctx.projectId, bank, {
      tags: a.tags,
      tagsMatch: a.tags_match,
      detail: a.detail,
      limit: a.limit ?? MAX_MENTAL_MODELS,
      offset: a.offset ?? 0,
    }),
  render: (p) => (p.items.length ? p.items.map((m) => `- ${modelLine(m)}`).join('\n') : 'No mental models.'),
});

export const getMentalModelTool = defineTool({
  name: 'get_mental_model',
  title: 'Get a mental model',
  description:
    'A mental model with its source query and content: the kept answer to its question. Read it instead of a new ' +
    'Reflect when it answers what you need; `is_stale` says the bank changed since it was written.',
  action: 'mental_models.get',
  annotations: { openWorldHint: false },
  bank: true,
  input: { ...modelId, ...MentalModelQuery.shape },
  output: MentalModelRecord,
  run: (ctx, a, bank) => getMentalModel(ctx.services, ctx.projectId, bank, a.mental_model_id, a.detail),
  render: (m) =>
    `${modelLine(m)}${m.source_query ? `\nQuestion: ${m.source_query}` : ''}` +
    `${m.content === undefined ? '' : `\n\n${m.content ?? '(no content yet)'}`}`,
});

export const createMentalModelTool = defineTool({
  name: 'create_mental_model',
  title: 'Create a mental model',
  description:
    'Create a mental model: a named question (`source_query`) whose Reflect answer is kept. Its first refresh is ' +
    'queued as an operation; `trigger.refresh_after_consolidation` keeps it current as the bank learns.',
  action: 'mental_models.create',
  annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  bank: true,
  input: CreateMentalModelBody.shape,
  output: CreatedMentalModel,
  run: (ctx, a, bank) => createMentalModel(ctx.services, ctx.projectId, bank, a),
  render: (r) => `Created mental model ${modelLine(r.mental_model)}; refresh operation ${r.operation_id}.`,
});

export const updateMentalModelTool = defineTool({
  name: 'update_mental_model',
  title: 'Update a mental model',
  description:
    'Change a mental model’s name, source query, tags, max_tokens or trigger; fields left out keep their value. ' +
    'A new query or tags make its content stale until refreshed.',
  action: 'mental_models.update',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  bank: true,
  input: { ...modelId, ...UpdateMentalModelBody.shape },
  output: MentalModelRecord,
  run: (ctx, { mental_model_id, ...b }, bank) =>
    updateMentalModel(ctx.services, ctx.projectId, bank, mental_model_id, b),
  render: (m) => `Updated mental model ${modelLine(m)}.`,
});

export const refreshMentalModelTool = defineTool({
  name: 'refresh_mental_model',
  title: 'Refresh a mental model',
  description:
    "Queue a refresh of a mental model: its question is answered again by Reflect over the bank's memories. " +
    'Returns the operation; the model shows `refresh_pending` until it is done.',
  action: 'mental_models.refresh',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  bank: true,
  input: modelId,
  output: MentalModelRefreshQueued,
  run: (ctx, a, bank) => requestRefresh(ctx.services, ctx.projectId, bank, a.mental_model_id),
  render: (r) =>
    `Refresh queued: operation ${r.operation_id} (${r.status}${r.deduplicated ? ', already waiting' : ''}).`,
});

export const deleteMentalModelTool = defineTool({
  name: 'delete_mental_model',
  title: 'Delete a mental model',
  description: 'Delete a mental model and its history. The memories it was drawn from stay.',
  action: 'mental_models.delete',
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  bank: true,
  input: modelId,
  output: DeletedMentalModel,
  run: (ctx, a, bank) => deleteMentalModel(ctx.services, ctx.projectId, bank, a.mental_model_id),
  render: (r) => `Deleted mental model ${r.id}.`,
});
