import { z } from 'zod';
import { HindsightBankSettings } from './bank-upkeep.js';
import { named } from './names.js';
import { BudgetSchema, DateOut, deeperThan, FactTypes, Tags, TagsMatchSchema } from './common.js';
import { OperationRecord } from './operations.js';

/** Largest `response_schema`, as serialised JSON (UTF-8 bytes). */
export const MAX_RESPONSE_SCHEMA_BYTES = 8 * 1024;
/** Deepest nesting of objects and arrays in a `response_schema`. */
export const MAX_RESPONSE_SCHEMA_DEPTH = 32;

/**
 * A JSON Schema for Reflect's structured answer. Bounded because ajv compiles it on the event
 * loop in time that grows with its size (about 1 s for 27 KB of nested objects, 16 s for 2.3 MB):
 * 8 KB holds any schema a structured answer needs.
 */
const ResponseSchema = z
  .record(z.string(), z.unknown())
  .superRefine((schema, ctx) => {
    if (deeperThan(schema, MAX_RESPONSE_SCHEMA_DEPTH)) {
      ctx.addIssue({
        code: 'custom',
        message: `response_schema nests deeper than ${MAX_RESPONSE_SCHEMA_DEPTH} levels`,
      });
    } else if (new TextEncoder().encode(JSON.stringify(schema)).length > MAX_RESPONSE_SCHEMA_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `response_schema is larger than ${MAX_RESPONSE_SCHEMA_BYTES} bytes as JSON`,
      });
    }
  })
  .meta({
    description:
      'JSON Schema (draft-07, or 2020-12 by `$schema`) for `structured_output`; needs a language model. ' +
      `At most ${MAX_RESPONSE_SCHEMA_BYTES} bytes as JSON, nested at most ${MAX_RESPONSE_SCHEMA_DEPTH} levels`,
  });

export const ReflectBody = z
  .object({
    query: z.string().min(1).max(20_000),
    context: z.string().max(20_000).optional(),
    budget: BudgetSchema.optional(),
    tags: Tags.optional(),
    tags_match: TagsMatchSchema.optional(),
    fact_types: FactTypes.optional(),
    response_schema: ResponseSchema.optional(),
  })
  .register(named, { name: 'ReflectRequest' });

export const ReflectResponse = z
  .object({
    response: z.string(),
    text: z.string().meta({ description: "Same as `response` (Hindsight's field name)" }),
    mode: z.enum(['extractive', 'llm']),
    usage: z
      .object({
        tokens_used: z.number().int(),
        input_tokens: z.number().int().optional(),
        output_tokens: z.number().int().optional(),
      })
      .passthrough(),
    based_on: z.object({
      memories: z.array(
        z.object({
          id: z.string(),
          text: z.string(),
          type: z.string(),
          context: z.string().nullable(),
          mentioned_at: DateOut.nullable(),
          occurred_start: DateOut.nullable(),
        }),
      ),
      observations: z.array(
        z.object({
          id: z.string(),
          text: z.string(),
          proof_count: z.number().int(),
          source_memory_ids: z.array(z.string()),
          contradicted: z.boolean(),
          contradicting_memory_ids: z.array(z.string()),
        }),
      ),
      directives: z.array(
        z.object({ id: z.string(), name: z.string(), text: z.string(), priority: z.number().int() }),
      ),
    }),
    structured_output: z.unknown().optional(),
  })
  .register(named, { name: 'ReflectResponse' });

export const ConsolidateResponse = z
  .object({
    operation_id: z.string(),
    deduplicated: z.boolean().meta({ description: 'True when a consolidation already waiting was returned' }),
    operation: OperationRecord,
  })
  .register(named, { name: 'ConsolidateResponse' });

export const IdentityBody = z
  .object({
    name: z.string().max(200).nullable().optional(),
    mission: z.string().max(20_000).nullable().optional(),
    background: z
      .string()
      .max(20_000)
      .nullable()
      .optional()
      .meta({ description: "Hindsight's older name for `mission`; ignored when `mission` is given" }),
  })
  .meta({
    example: {
      name: 'Support assistant for Alice',
      mission: 'Help Alice plan her training and keep her motivated.',
    },
  })
  .register(named, { name: 'BankIdentityUpdate' });

/** `PATCH /banks/{bank}`: the identity, and (Hindsight's partial update) any bank setting. */
export const PatchBankBody = IdentityBody.extend(HindsightBankSettings)
  .meta({ example: { name: 'Support assistant for Alice', disposition_empathy: 4 } })
  .register(named, { name: 'BankPatch' });
