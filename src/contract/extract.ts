import { z } from 'zod';
import { named } from './names.js';
import { DateOut, FactTypeSchema, IsoDate } from './common.js';
import { EntityIn, MAX_CONTENT_CHARS } from './memories.js';

/**
 * `POST /banks/{bank}/memories/dry-run-extract`: one item as Retain would take it, and settings
 * of the bank to try instead of its own for this call (null or absent: the bank's).
 */
export const DryRunExtractBody = z
  .object({
    content: z.string().min(1).max(MAX_CONTENT_CHARS),
    context: z.string().max(10_000).optional(),
    timestamp: IsoDate.nullable().optional().meta({ description: 'when it was said (default: now)' }),
    fact_type: FactTypeSchema.optional(),
    entities: z.array(EntityIn).max(100).optional(),
    retain_extraction_mode: z
      .enum(['concise', 'verbose', 'chunks', 'custom', 'verbatim'])
      .nullable()
      .optional(),
    retain_mission: z.string().max(4000).nullable().optional(),
    retain_custom_instructions: z.string().max(4000).nullable().optional(),
    retain_chunk_size: z.number().int().min(200).max(100_000).nullable().optional(),
    retain_auto_entities: z.boolean().nullable().optional(),
  })
  .register(named, { name: 'DryRunExtractRequest' });

export const DryRunExtractResult = z
  .object({
    facts: z.array(
      z.object({
        text: z.string(),
        fact_type: FactTypeSchema,
        occurred_start: DateOut.nullable(),
        occurred_end: DateOut.nullable(),
        entities: z.array(z.string()).meta({ description: 'names as extracted, not yet resolved' }),
      }),
    ),
    extraction: z.enum(['chunks', 'local', 'llm']).meta({ description: 'which extractor ran' }),
    usage: z.object({
      input_tokens: z.number().int(),
      output_tokens: z.number().int(),
      total_tokens: z.number().int(),
    }),
  })
  .register(named, { name: 'DryRunExtractResult' });
