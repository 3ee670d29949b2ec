import { z } from 'zod';
import { named } from './names.js';
import { BudgetSchema, DateOut, IsoDate, PageQuery, Tags } from './common.js';
import { RecallBody } from './memories.js';

/** Most cases one evaluation runs: each is one Recall. */
export const MAX_EVALUATION_CASES = 1000;
/** Largest `k`: Recall returns at most 100 results (budget `high`). */
export const MAX_EVALUATION_K = 100;
/** `k` when neither the request nor the rerun run gives one. */
export const DEFAULT_EVALUATION_K = 10;
/** Most expected memories of one case. */
export const MAX_EXPECTED_IDS = 100;

const MemoryId = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a memory id (a UUID)');

/** The retrieval channels whose own figures an evaluation reports. */
export const EVALUATION_CHANNELS = ['semantic', 'keyword', 'graph', 'temporal'] as const;

export const EvaluationCase = z
  .object({
    query: RecallBody.shape.query,
    expected_memory_ids: z.array(MemoryId).min(1).max(MAX_EXPECTED_IDS).meta({
      description: 'The memories a good Recall returns for the query (any order; duplicates count once)',
    }),
    query_timestamp: IsoDate.optional().meta({ description: 'As in Recall: the time the query is asked at' }),
    tags: Tags.optional().meta({
      description: "As in Recall (tags_match 'any'): memories with any of these tags, or untagged",
    }),
  })
  .register(named, { name: 'EvaluationCase' });

export const RunEvaluationBody = z
  .object({
    k: z
      .number()
      .int()
      .min(1)
      .max(MAX_EVALUATION_K)
      .optional()
      .meta({
        description: `Results of each Recall that count; default ${DEFAULT_EVALUATION_K}, or the rerun run's`,
      }),
    budget: BudgetSchema.optional().meta({
      description: "Recall's budget for every case; default the bank's (or what the rerun run was asked)",
    }),
    max_tokens: z.number().int().min(1).max(100_000).optional().meta({
      description: "Recall's max_tokens for every case; default Recall's (or what the rerun run was asked)",
    }),
    cases: z.array(EvaluationCase).min(1).max(MAX_EVALUATION_CASES).optional(),
    from: z.string().max(64).optional().meta({ description: "A past run's id: its cases run again" }),
  })
  .superRefine((b, ctx) => {
    if ((b.cases === undefined) === (b.from === undefined))
      ctx.addIssue({ code: 'custom', path: ['cases'], message: 'give either cases or from (a run id)' });
  })
  .meta({
    example: {
      k: 10,
      cases: [
        {
          query: 'Where does Alice work?',
          expected_memory_ids: ['0b6f7e52-6c1f-4c1e-9d0e-0c1f2a3b4c5d'],
        },
      ],
    },
  })
  .register(named, { name: 'EvaluationRequest' });

export const EvaluationFigures = z
  .object({
    recall_at_k: z.number().meta({
      description: 'Mean over cases of the share of expected memories in the first k results',
    }),
    mrr: z.number().meta({
      description: 'Mean over cases of 1 / the rank of the first expected memory in the first k (0 if none)',
    }),
  })
  .register(named, { name: 'EvaluationFigures' });

const ChannelName = z.enum(EVALUATION_CHANNELS);

export const EvaluationCaseOutcome = z
  .object({
    query: z.string(),
    expected_memory_ids: z.array(z.string()),
    query_timestamp: DateOut.optional(),
    tags: z.array(z.string()).optional(),
    rank: z.number().int().nullable().meta({
      description: 'Rank (from 1) of the first expected memory among the first k results; null if none',
    }),
    recall_at_k: z.number().meta({ description: 'Share of the expected memories among the first k results' }),
    found_by: z.array(ChannelName).meta({
      description: 'Channels whose candidates held an expected memory (at any rank)',
    }),
    expected: z
      .array(
        z.object({
          memory_id: z.string(),
          rank: z.number().int().nullable(),
          found_by: z.array(ChannelName),
        }),
      )
      .meta({
        description:
          'Each expected memory: its rank among the first k results, and the channels that found it',
      }),
  })
  .register(named, { name: 'EvaluationCaseOutcome' });

const summaryFields = {
  id: z.string(),
  bank_id: z.string(),
  created_at: DateOut,
  k: z.number().int(),
  budget: BudgetSchema.meta({ description: 'The Recall budget the cases ran with' }),
  max_tokens: z.number().int().meta({ description: 'The Recall max_tokens the cases ran with' }),
  case_count: z.number().int(),
  recall_at_k: EvaluationFigures.shape.recall_at_k,
  mrr: EvaluationFigures.shape.mrr,
  channels: z
    .object(
      Object.fromEntries(EVALUATION_CHANNELS.map((c) => [c, EvaluationFigures])) as Record<
        (typeof EVALUATION_CHANNELS)[number],
        typeof EvaluationFigures
      >,
    )
    .meta({ description: "Each channel's own candidate list scored the same way (its first k)" }),
};

export const EvaluationSummary = z.object(summaryFields).register(named, { name: 'EvaluationSummary' });

export const EvaluationRecord = z
  .object({ ...summaryFields, cases: z.array(EvaluationCaseOutcome) })
  .register(named, { name: 'Evaluation' });

export const EvaluationPage = z
  .object({ items: z.array(EvaluationSummary), next_cursor: z.string().nullable() })
  .register(named, { name: 'EvaluationPage' });

export const EvaluationQuery = z.object(PageQuery);

export const EvaluationParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  id: z.string().meta({ param: { name: 'id', in: 'path' } }),
});

export const DeletedEvaluation = z.object({ deleted: z.literal(true), id: z.string() });
