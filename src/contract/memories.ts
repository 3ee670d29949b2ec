import { z } from 'zod';
import { Receipt } from './receipts.js';
import { EntityState } from './graph.js';
import { named } from './names.js';
import {
  BudgetSchema,
  DateOut,
  FactTypeSchema,
  FactTypes,
  IsoDate,
  Metadata,
  PageQuery,
  Tags,
  TagsMatchSchema,
} from './common.js';

export const MemoryStateSchema = z.enum(['valid', 'invalidated']).register(named, { name: 'MemoryState' });

export const EntityIn = z.object({
  text: z.string().min(1).max(256),
  type: z.string().min(1).max(64).default('OTHER'),
});

/** Longest memory content accepted, in characters. */
export const MAX_CONTENT_CHARS = 100_000;

export const RetainItem = z
  .object({
    content: z.string().min(1).max(MAX_CONTENT_CHARS),
    fact_type: FactTypeSchema.optional(),
    context: z.string().max(10_000).optional(),
    timestamp: IsoDate.optional(),
    entities: z.array(EntityIn).max(100).optional(),
    resolve_entities: z.boolean().optional(),
    tags: Tags.optional(),
    metadata: Metadata.optional(),
    document_id: z.string().max(256).optional(),
    update_mode: z.enum(['replace', 'append']).optional(),
  })
  .register(named, { name: 'RetainItem' });

export const MAX_ITEMS = 1000;

export const RetainBody = z
  .object({
    items: z.array(RetainItem).min(1).max(MAX_ITEMS),
    document_id: z.string().max(256).optional(),
    async: z.boolean().optional(),
    operation_id: z.string().max(64).optional().meta({
      description: 'With async: a client-chosen UUID; repeating the request returns the same operation',
    }),
  })
  .register(named, { name: 'RetainRequest' });

export const RetainQuery = z.object({ space: z.string().max(256).optional() });

export const RetainResponse = z
  .object({
    success: z.boolean(),
    async: z.literal(false),
    bank_id: z.string(),
    items_count: z.number().int(),
    memories_created: z.number().int(),
    document_id: z.string().nullable(),
    memory_ids: z.array(z.string()),
    extraction: z.string(),
  })
  .register(named, { name: 'RetainResponse' });

const memoryFields = {
  id: z.string(),
  bank_id: z.string(),
  type: FactTypeSchema,
  text: z.string(),
  context: z.string().nullable(),
  occurred_start: DateOut.nullable(),
  occurred_end: DateOut.nullable(),
  mentioned_at: DateOut.nullable(),
  entities: z.array(z.string()),
  tags: z.array(z.string()),
  metadata: Metadata,
  document_id: z.string().nullable(),
  chunk_id: z.string().nullable(),
  state: MemoryStateSchema.meta({
    description:
      'curation: an `invalidated` memory is kept and listed, but Recall, Reflect and consolidation leave it out',
  }),
  invalidation_reason: z.string().nullable().meta({ description: 'why it was invalidated; null when valid' }),
  edited_at: DateOut.nullable().meta({ description: 'when a client last edited it; null if never' }),
};

export const MemoryRecord = z
  .object({ ...memoryFields, created_at: DateOut })
  .register(named, { name: 'Memory' });

export const StageScores = z
  .object({
    final: z.number(),
    semantic: z.number(),
    keyword: z.number(),
    graph: z.number(),
    temporal: z.number(),
    reranker: z.number(),
  })
  .register(named, { name: 'Scores' });

export const RecallBody = z
  .object({
    query: z.string().min(1).max(20_000),
    types: FactTypes.optional(),
    max_tokens: z.number().int().min(1).max(100_000).optional(),
    budget: BudgetSchema.optional(),
    include_org: z.boolean().optional(),
    space: z.string().max(256).optional(),
    tags: Tags.optional(),
    tags_match: TagsMatchSchema.optional(),
    query_timestamp: IsoDate.optional(),
    temporal_window: z.object({ start: IsoDate, end: IsoDate }).optional(),
    min_scores: z
      .object({
        semantic: z.number().optional(),
        keyword: z.number().optional(),
        graph: z.number().optional(),
        temporal: z.number().optional(),
        reranker: z.number().optional(),
        final: z.number().optional(),
      })
      .strict()
      .optional(),
    include: z
      .object({
        entities: z
          .object({
            max_tokens: z.number().int().min(0).max(100_000).optional().meta({ description: 'default 500' }),
          })
          .nullable()
          .optional()
          .meta({
            description: 'The `entities` section: on by default (Hindsight’s default); `null` leaves it out',
          }),
      })
      .optional(),
  })
  .register(named, { name: 'RecallRequest' });

export const RecallResponse = z
  .object({
    results: z.array(z.object({ ...memoryFields, created_at: DateOut, scores: StageScores })),
    usage: z.object({
      tokens_used: z.number().int(),
      max_tokens: z.number().int(),
      truncated: z.boolean(),
      org_blended: z.boolean(),
    }),
    entities: z.record(z.string(), EntityState).nullable().optional().meta({
      description:
        'The entities the results mention, by name, in the order the results first mention them, each with memories about it (observations first) while `include.entities.max_tokens` of their text last; null when `include.entities` is null',
    }),
  })
  .register(named, { name: 'RecallResponse' });

/** Which memories a listing shows by curation state. */
export const StateFilter = z.enum(['valid', 'invalidated', 'all']);

export const ListMemoriesQuery = z.object({
  ...PageQuery,
  type: FactTypeSchema.optional(),
  tags: z.string().max(4000).optional().meta({ description: 'comma-separated tags' }),
  tags_match: TagsMatchSchema.optional(),
  document_id: z.string().max(256).optional(),
  q: z.string().max(500).optional(),
  state: StateFilter.optional().meta({ description: 'curation state to list (default all)' }),
});

export const MemoryPage = z
  .object({ items: z.array(MemoryRecord), next_cursor: z.string().nullable() })
  .register(named, { name: 'MemoryPage' });

export const MemoryParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  id: z.string().meta({ param: { name: 'id', in: 'path' } }),
});

export const DeletedMemory = z.object({ deleted: z.literal(true), id: z.string(), receipt: Receipt });

/** An ISO date, or '' to clear the field. */
const DateOrClear = z.union([z.literal(''), IsoDate]);

/**
 * Hindsight's curation body (`UpdateMemoryRequest`): null or absent leaves a field as it is,
 * '' clears a nullable one.
 */
export const MemoryPatchBody = z
  .object({
    text: z.string().min(1).max(MAX_CONTENT_CHARS).nullable().optional().meta({
      description:
        'new text: the memory’s keyword postings, entities and vector are rebuilt, and what consolidation derived from it is made again',
    }),
    context: z.string().max(10_000).nullable().optional().meta({ description: "'' clears it" }),
    occurred_start: DateOrClear.nullable().optional().meta({ description: "'' clears it" }),
    occurred_end: DateOrClear.nullable().optional().meta({ description: "'' clears it" }),
    fact_type: FactTypeSchema.exclude(['observation']).nullable().optional(),
    entities: z.array(z.string().min(1).max(256)).max(100).nullable().optional().meta({
      description: 'replaces the memory’s entities; [] detaches them all',
    }),
    resolve_entities: z.boolean().optional().meta({
      description:
        'match `entities` to the bank’s known entities as Retain does (default true); false takes the names as written',
    }),
    state: MemoryStateSchema.nullable().optional().meta({
      description: '`invalidated` retires the memory (kept, listed, restorable); `valid` restores it',
    }),
    reason: z.string().max(1000).nullable().optional().meta({ description: 'kept with an invalidation' }),
  })
  .register(named, { name: 'UpdateMemoryRequest' });

/** Hindsight's answer to clearing one memory's observations. */
export const ClearedMemoryObservations = z
  .object({ deleted_count: z.number().int() })
  .register(named, { name: 'ClearMemoryObservationsResponse' });
