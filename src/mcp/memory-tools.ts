import { z } from '@hono/zod-openapi';
import { Tags, toDate } from '../contract/common.js';
import {
  DeletedMemory,
  ListMemoriesQuery,
  MemoryPage,
  RecallBody,
  RecallResponse,
  RetainBody,
  RetainQuery,
  RetainResponse,
} from '../contract/memories.js';
import { ReflectBody, ReflectResponse } from '../contract/reflect.js';
import { deleteMemory, listMemories } from '../core/memories.js';
import { recall } from '../core/recall/recall.js';
import { reflect } from '../core/reflect/reflect.js';
import { retain } from '../core/retain/retain.js';
import { memoryLine } from './render.js';
import { defineTool } from './tool.js';

/** Retain, synchronously: an agent wants to know its memory is stored before it moves on. */
export const retainTool = defineTool({
  name: 'retain',
  title: 'Retain memories',
  description:
    'Store what you learned about the subject of a bank (a person, a team). Give one item per fact, in plain ' +
    'sentences that make sense on their own ("Alice adopted a beagle named Pepper"). `timestamp` (ISO 8601) is ' +
    'when it happened or was said and anchors relative dates; `tags` scope visibility; a repeated `document_id` ' +
    'replaces that document (or appends with `update_mode: append`). The bank is created on first use.',
  action: 'memories.retain',
  annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  bank: true,
  input: {
    items: RetainBody.shape.items.describe(
      'Memories to store: `content` is required, the other fields are optional',
    ),
    document_id: RetainBody.shape.document_id,
    space: RetainQuery.shape.space.describe('Attach a new bank to this space'),
  },
  output: RetainResponse,
  run: (ctx, a, bank) =>
    retain(ctx.services, ctx.projectId, bank, {
      document_id: a.document_id,
      space: a.space,
      items: a.items.map((it) => ({ ...it, timestamp: toDate(it.timestamp) })),
    }),
  render: (r) =>
    `Stored ${r.memories_created} ${r.memories_created === 1 ? 'memory' : 'memories'}` +
    `${r.document_id ? ` in document ${r.document_id}` : ''} (ids: ${r.memory_ids.join(', ') || 'none'}).`,
});

export const recallTool = defineTool({
  name: 'recall',
  title: 'Recall memories',
  description:
    'Find what a bank remembers that is relevant to a query: semantic, keyword, graph and temporal search, ' +
    'fused and cut to `max_tokens` (default 2048). Ask in natural language ("What is the name of Alice\'s dog?"). ' +
    'Returns the memories themselves, best first; use reflect for a written answer.',
  action: 'memories.recall',
  annotations: { openWorldHint: false },
  bank: true,
  input: RecallBody.shape,
  output: RecallResponse,
  run: (ctx, a, bank) =>
    recall(
      ctx.services,
      ctx.projectId,
      bank,
      {
        ...a,
        query_timestamp: toDate(a.query_timestamp),
        temporal_window: a.temporal_window && {
          start: new Date(a.temporal_window.start),
          end: new Date(a.temporal_window.end),
        },
      },
      { banks: ctx.banks },
    ),
  render: (r) => {
    const head = r.results.length
      ? `${r.results.length} ${r.results.length === 1 ? 'memory' : 'memories'} (${r.usage.tokens_used} of ${r.usage.max_tokens} tokens${r.usage.truncated ? ', truncated' : ''}):`
      : 'No memories matched.';
    return [head, ...r.results.map((m, i) => `${i + 1}. ${memoryLine(m)}`)].join('\n');
  },
});

export const reflectTool = defineTool({
  name: 'reflect',
  title: 'Reflect',
  description:
    "Ask a question and get a written answer from everything a bank knows, shaped by the bank's disposition and " +
    'directives, with the memories it is based on. Without a language model on the server the answer is ' +
    'extractive (the most relevant memories, dated).',
  action: 'reflect',
  annotations: { openWorldHint: false },
  bank: true,
  input: ReflectBody.shape,
  output: ReflectResponse,
  run: (ctx, a, bank) => reflect(ctx.services, ctx.projectId, bank, a),
  render: (r) => {
    const basis = r.based_on.memories.length ? `\n\nBased on ${r.based_on.memories.length} memories.` : '';
    return `${r.response}${basis}`;
  },
});

export const listMemoriesTool = defineTool({
  name: 'list_memories',
  title: 'List memories',
  description:
    'Page through the memories of a bank, newest first (default 50, at most 500 per page); filter by type, tags, ' +
    'document or a text query `q`. Pass `next_cursor` back as `cursor` for the next page.',
  action: 'memories.list',
  annotations: { openWorldHint: false },
  bank: true,
  input: { ...ListMemoriesQuery.shape, tags: Tags.optional() },
  output: MemoryPage,
  run: (ctx, a, bank) =>
    listMemories(
      ctx.services,
      ctx.projectId,
      bank,
      {
        types: a.type ? [a.type] : undefined,
        tags: a.tags,
        tagsMatch: a.tags_match,
        documentId: a.document_id,
        q: a.q,
      },
      { limit: a.limit ?? 50, cursor: a.cursor },
    ),
  render: (p) => {
    const lines = p.items.map((m) => `- ${memoryLine(m)}`);
    if (p.items.length === 0) lines.push('No memories.');
    if (p.next_cursor) lines.push(`More: cursor ${p.next_cursor}`);
    return lines.join('\n');
  },
});

export const deleteMemoryTool = defineTool({
  name: 'delete_memory',
  title: 'Delete a memory',
  description:
    'Delete one memory by id (ids come with recall and list_memories results). This cannot be undone.',
  action: 'memories.delete',
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  bank: true,
  input: { id: z.string().min(1).max(64).describe('The memory id') },
  output: DeletedMemory,
  run: (ctx, a, bank) => deleteMemory(ctx.services, ctx.projectId, bank, a.id),
  render: (r) => `Deleted memory ${r.id}.`,
});
