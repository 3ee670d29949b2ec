import { z } from 'zod';
import { named } from './names.js';
import { DateOut, FactTypes, Tags, TagsMatchSchema } from './common.js';
import { OperationRecord } from './operations.js';
import { ReflectBody } from './reflect.js';

/** Most mental models one bank may hold: each refresh is a Reflect. */
export const MAX_MENTAL_MODELS = 50;
/** Longest source query, in characters (Recall's token bound applies too). */
export const MAX_SOURCE_QUERY = 4000;
/** Longest name, in characters. */
export const MAX_MENTAL_MODEL_NAME = 256;
/** Largest `max_tokens` of a model's content, and its default. */
export const MAX_MENTAL_MODEL_TOKENS = 8192;
export const DEFAULT_MENTAL_MODEL_TOKENS = 2048;
/** Content versions kept per model (its history). */
export const MENTAL_MODEL_HISTORY = 20;
/** The operation kind of a refresh (Hindsight's name for it). */
export const REFRESH_MENTAL_MODEL = 'refresh_mental_model';

/** Hindsight's rule for a custom id: lower-case letters, digits and hyphens. */
export const MentalModelId = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,63}$/,
    'lower-case letters, digits and hyphens, at most 64, not starting with a hyphen',
  );

const Name = z.string().min(1).max(MAX_MENTAL_MODEL_NAME);
const SourceQuery = z.string().min(1).max(MAX_SOURCE_QUERY);
const MaxTokens = z.number().int().min(1).max(MAX_MENTAL_MODEL_TOKENS);

const unsupported = (ctx: z.RefinementCtx, path: string, message: string) =>
  ctx.addIssue({ code: 'custom', path: [path], message });

/**
 * How and on what a model refreshes (Hindsight's `trigger`). mnemo refreshes in full only, after
 * consolidation or when asked; settings it does not have are refused (delta mode, cron, tag
 * groups) or, when they change nothing here, named in `X-Ignored-Fields`.
 */
export const MentalModelTriggerInput = z
  .object({
    mode: z.enum(['full', 'delta']).optional(),
    refresh_after_consolidation: z.boolean().optional().meta({
      description:
        'Refresh after each consolidation of the bank that left the model stale (queued as an operation)',
    }),
    refresh_cron: z.string().max(200).nullish(),
    fact_types: FactTypes.nullish().meta({ description: 'Fact types the refresh draws on; all when absent' }),
    exclude_mental_models: z.boolean().optional().meta({
      description: "Kept as given: mnemo's Reflect never draws on mental models",
    }),
    exclude_mental_model_ids: z.array(MentalModelId).max(MAX_MENTAL_MODELS).nullish(),
    tags_match: TagsMatchSchema.nullish().meta({
      description: "How the model's tags filter memories; default `all_strict` with tags, `any` without",
    }),
    tag_groups: z.array(z.unknown()).max(100).nullish(),
    response_schema: ReflectBody.shape.response_schema.nullish(),
  })
  .superRefine((t, ctx) => {
    if (t.mode === 'delta')
      unsupported(ctx, 'mode', "mnemo refreshes in full only: 'delta' is not supported");
    if (t.refresh_cron != null)
      unsupported(
        ctx,
        'refresh_cron',
        'scheduled refreshes are not supported: use refresh_after_consolidation',
      );
    if (t.tag_groups?.length)
      unsupported(
        ctx,
        'tag_groups',
        "tag groups are not supported: use the model's tags and trigger.tags_match",
      );
  })
  .register(named, { name: 'MentalModelTriggerInput' });

export const MentalModelTrigger = z
  .object({
    mode: z.literal('full'),
    refresh_after_consolidation: z.boolean(),
    refresh_cron: z.null(),
    fact_types: z.array(z.string()).nullable(),
    exclude_mental_models: z.boolean(),
    exclude_mental_model_ids: z.array(z.string()).nullable(),
    tags_match: TagsMatchSchema.nullable(),
    tag_groups: z.null(),
    response_schema: z.record(z.string(), z.unknown()).nullable(),
  })
  .register(named, { name: 'MentalModelTrigger' });

export const MentalModelRecord = z
  .object({
    id: z.string(),
    bank_id: z.string(),
    name: z.string(),
    source_query: z.string().nullable().optional(),
    content: z
      .string()
      .nullable()
      .optional()
      .meta({ description: 'The last refresh’s Reflect answer; null before' }),
    tags: z.array(z.string()),
    max_tokens: z.number().int(),
    trigger: MentalModelTrigger.optional(),
    last_refreshed_at: DateOut.nullable(),
    created_at: DateOut,
    updated_at: DateOut,
    reflect_response: z.record(z.string(), z.unknown()).nullable().optional().meta({
      description: 'The last refresh’s whole Reflect answer (with `based_on`); `detail=full` only',
    }),
    is_stale: z.boolean().meta({
      description:
        'True when the bank changed (any write Recall can see) since the last refresh, or there was none',
    }),
    refresh_pending: z.boolean().meta({ description: 'A refresh is asked for and not done yet' }),
    refresh_error: z
      .string()
      .nullable()
      .meta({ description: 'Why the last refresh failed, until one succeeds' }),
  })
  .register(named, { name: 'MentalModel' });

export const MentalModelList = z
  .object({
    items: z.array(MentalModelRecord),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'MentalModelList' });

export const CreateMentalModelBody = z
  .object({
    id: MentalModelId.nullish().meta({ description: 'A custom id; a UUID when absent' }),
    name: Name,
    source_query: SourceQuery,
    tags: Tags.optional().meta({
      description: 'Scope the refresh: only memories with these tags (see trigger.tags_match)',
    }),
    max_tokens: MaxTokens.optional().meta({
      description: `Longest content, in tokens; default ${DEFAULT_MENTAL_MODEL_TOKENS}`,
    }),
    trigger: MentalModelTriggerInput.optional(),
  })
  .meta({
    example: {
      name: 'Training plan',
      source_query: 'How is Alice training, and what holds her back?',
      trigger: { refresh_after_consolidation: true },
    },
  })
  .register(named, { name: 'MentalModelCreate' });

/** `null` leaves a field as it is (Hindsight's clients send nulls for fields they do not change). */
export const UpdateMentalModelBody = z
  .object({
    name: Name.nullish(),
    source_query: SourceQuery.nullish(),
    tags: Tags.nullish(),
    max_tokens: MaxTokens.nullish(),
    trigger: MentalModelTriggerInput.nullish(),
  })
  .meta({ example: { source_query: 'How is Alice training?' } })
  .register(named, { name: 'MentalModelUpdate' });

export const MentalModelParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  id: z
    .string()
    .max(200)
    .meta({ param: { name: 'id', in: 'path' } }),
});

const Detail = z.enum(['metadata', 'content', 'full']).optional().meta({
  description:
    "'metadata': names and tags; 'content': with query, content and trigger; 'full' (default): with reflect_response",
});

export const MentalModelQuery = z.object({ detail: Detail });

export const MentalModelListQuery = z.object({
  tags: z
    .union([z.string().max(4000), z.array(z.string().max(128)).max(64)])
    .optional()
    .meta({ description: 'repeated, or comma-separated' }),
  tags_match: z.enum(['any', 'all', 'exact']).optional(),
  detail: Detail,
  limit: z.coerce.number().int().min(1).max(MAX_MENTAL_MODELS).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});

export const CreatedMentalModel = z
  .object({
    mental_model_id: z.string(),
    operation_id: z.string().meta({ description: 'The refresh queued for the new model' }),
    mental_model: MentalModelRecord,
  })
  .register(named, { name: 'MentalModelCreated' });

export const MentalModelRefreshQueued = z
  .object({
    operation_id: z.string(),
    status: z.string(),
    deduplicated: z
      .boolean()
      .meta({ description: 'A refresh of the bank’s models already waiting was returned' }),
    operation: OperationRecord,
  })
  .register(named, { name: 'MentalModelRefreshQueued' });

export const MentalModelHistoryEntry = z
  .object({
    previous_content: z.string().nullable(),
    content: z.string().nullable(),
    cause: z.enum(['refresh', 'clear']),
    changed_at: DateOut,
  })
  .register(named, { name: 'MentalModelHistoryEntry' });

export const MentalModelHistory = z.array(MentalModelHistoryEntry);

const Counts = z.record(z.string(), z.number().int());

export const MentalModelDryRun = z
  .object({
    mental_model_id: z.string(),
    name: z.string(),
    requested_mode: z.literal('full'),
    effective_mode: z.literal('full'),
    outcome: z.enum(['content_written', 'refresh_failed_empty_candidate']),
    would_persist: z.boolean(),
    scope: z.object({
      tags: z.array(z.string()).nullable(),
      tags_match: TagsMatchSchema,
      fact_types: z.array(z.string()).nullable(),
      exclude_mental_models: z.boolean(),
      exclude_mental_model_ids: z.array(z.string()),
    }),
    window: z.object({ created_before: DateOut, created_after: z.null(), watermark: z.null() }),
    facts: z.object({ retrieved: Counts, used: Counts }),
    based_on: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))),
    current_content: z.string(),
    candidate_content: z.string(),
    preview_content: z.string(),
    diff: z
      .string()
      .meta({ description: 'Unified diff from current_content to preview_content; empty when equal' }),
    mode: z.enum(['extractive', 'llm']).meta({ description: 'How Reflect answered' }),
    usage: z.object({ tokens_used: z.number().int() }).passthrough(),
    duration_ms: z.number(),
    warnings: z.array(z.string()),
  })
  .register(named, { name: 'MentalModelDryRunRefresh' });

export const DeletedMentalModel = z.object({
  success: z.literal(true),
  deleted: z.literal(true),
  id: z.string(),
});
