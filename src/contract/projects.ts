import { z } from 'zod';
import { named } from './names.js';
import { DateOut, IsoDate, PageQuery, ScopeSchema } from './common.js';

const limit = z.number().int().positive().nullable().optional();
export const Limits = z
  .object({
    requests_per_minute: limit,
    requests_per_minute_per_key: limit,
    retained_items_per_day: limit,
    stored_memories: limit,
    // Cost budgets (docs/security.md#cost-budgets): what requests and the jobs they cause cost.
    retained_items_per_minute: limit,
    characters_per_minute: limit.describe('characters of retained content and context'),
    characters_per_day: limit,
    entities_per_minute: limit.describe('entities extracted or given by Retain'),
    entities_per_day: limit,
    model_calls_per_minute: limit.describe('language model calls (extraction, consolidation, Reflect)'),
    model_calls_per_day: limit,
    model_tokens_per_minute: limit.describe(
      'language model tokens, input and output, as the provider reports them',
    ),
    model_tokens_per_day: limit,
    recall_units_per_minute: limit.describe(
      "Recall work (also Reflect's): per bank searched 1 unit at budget low, 2 at mid, 5 at high; plus 1 per 1,000 query characters and 1 per 10,000 max_tokens",
    ),
    recall_units_per_day: limit,
  })
  .register(named, { name: 'ProjectLimits' });

const count = z.number().int();
/** Counts of the cost budgets in their current windows (0 where no budget applies). */
export const BudgetUsage = z
  .object({
    retained_items_per_minute: count,
    characters_per_minute: count,
    characters_per_day: count,
    entities_per_minute: count,
    entities_per_day: count,
    model_calls_per_minute: count,
    model_calls_per_day: count,
    model_tokens_per_minute: count,
    model_tokens_per_day: count,
    recall_units_per_minute: count,
    recall_units_per_day: count,
  })
  .register(named, { name: 'BudgetUsage' });

/** A project's current usage against its limits. */
export const ProjectUsage = z
  .object({
    requests_this_minute: z.number().int(),
    retained_items_today: z.number().int(),
    stored_memories: z.number().int(),
    budgets: BudgetUsage,
  })
  .register(named, { name: 'ProjectUsage' });

export const ProjectRecord = z
  .object({ id: z.string(), name: z.string(), limits: Limits, created_at: DateOut })
  .register(named, { name: 'Project' });
export const ProjectWithUsage = ProjectRecord.extend({
  effective_limits: Limits.meta({
    description: 'limits with the server defaults applied; null = unlimited',
  }),
  usage: ProjectUsage,
}).register(named, { name: 'ProjectWithUsage' });
export const ProjectList = z.object({ items: z.array(ProjectRecord) });
export const CreateProjectBody = z
  .object({ id: z.string().min(1).max(64), name: z.string().min(1).max(256), limits: Limits.optional() })
  .register(named, { name: 'CreateProject' });
export const PatchProjectBody = z.object({
  name: z.string().min(1).max(256).optional(),
  limits: Limits.optional(),
});
export const ProjectParam = z.object({
  project: z.string().meta({ param: { name: 'project', in: 'path' } }),
});
export const KeyParams = z.object({
  project: z.string().meta({ param: { name: 'project', in: 'path' } }),
  key_id: z.string().meta({ param: { name: 'key_id', in: 'path' } }),
});

export const KeyRecord = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    scopes: z.array(ScopeSchema),
    banks: z.array(z.string()).nullable().meta({
      description: 'The banks the key is limited to (ids and `prefix*` patterns); null = every bank',
    }),
    created_at: DateOut,
    expires_at: DateOut.nullable(),
    revoked_at: DateOut.nullable(),
  })
  .register(named, { name: 'ApiKey' });
export const CreatedKey = KeyRecord.extend({
  key: z.string().meta({ description: 'The full key; shown only once' }),
}).register(named, { name: 'CreatedApiKey' });
export const KeyList = z.object({ items: z.array(KeyRecord) });
export const CreateKeyBody = z
  .object({
    name: z.string().min(1).max(256),
    scopes: z.array(ScopeSchema).min(1),
    banks: z
      .array(z.string().max(256))
      .min(1)
      .max(100)
      .nullable()
      .optional()
      .meta({
        description:
          'Limit the key to these banks: exact ids, or prefixes ending in `*` (`user-42/*`). Omitted or null = every bank. At most 100.',
        example: ['user-42/*'],
      }),
    expires_at: IsoDate.nullable().optional(),
  })
  .register(named, { name: 'CreateApiKey' });

export const AuditQuery = z.object({
  ...PageQuery,
  bank: z.string().max(256).optional(),
  action: z.string().max(128).optional(),
  since: IsoDate.optional(),
  until: IsoDate.optional(),
});
export const AuditRecord = z
  .object({
    id: z.string(),
    at: DateOut,
    actor: z.object({ type: z.string(), key_id: z.string().nullable() }),
    action: z.string(),
    bank_id: z.string().nullable(),
    space_id: z.string().nullable(),
    status: z.number().int(),
    request_id: z.string(),
    count: z.number().int().meta({
      description:
        "requests this entry stands for: 1, or (action 'auth.refusals') a minute's unauthenticated refusals beyond the first ones",
    }),
  })
  .register(named, { name: 'AuditEntry' });
export const AuditPage = z.object({ items: z.array(AuditRecord), next_cursor: z.string().nullable() });
