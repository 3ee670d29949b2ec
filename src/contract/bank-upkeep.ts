import { z } from 'zod';
import { named } from './names.js';
import { FactTypeSchema, Tags } from './common.js';
import { Disposition } from './banks.js';

const level = z.number().int().min(1).max(5);

/** `PUT /banks/{bank}/profile` (Hindsight's older call): the disposition traits, 1–5 each. */
export const DispositionBody = z
  .object({ disposition: z.object({ skepticism: level, literalism: level, empathy: level }) })
  .register(named, { name: 'UpdateDisposition' });

/** `POST /banks/{bank}/background` (Hindsight's older call): sets the mission. */
export const BackgroundBody = z
  .object({
    content: z.string().max(20_000),
    update_disposition: z
      .boolean()
      .optional()
      .meta({ description: 'accepted and ignored, as Hindsight does' }),
  })
  .register(named, { name: 'AddBackground' });

export const BackgroundResponse = z
  .object({ mission: z.string(), background: z.string().nullable(), disposition: Disposition })
  .register(named, { name: 'Background' });

export const ClearMemoriesQuery = z.object({
  type: FactTypeSchema.optional().meta({ description: 'only memories of this fact type' }),
});

export const ClearedMemories = z
  .object({ success: z.literal(true), deleted_count: z.number().int(), message: z.string() })
  .register(named, { name: 'ClearedMemories' });

export const ClearedObservations = z
  .object({ success: z.literal(true), deleted_count: z.number().int(), message: z.string() })
  .register(named, { name: 'ClearedObservations' });

export const ObservationScopes = z
  .object({
    scopes: z.array(
      z.object({
        tags: z
          .array(z.string())
          .meta({ description: 'the exact tag set, sorted; [] is the untagged scope' }),
        count: z.number().int(),
      }),
    ),
  })
  .register(named, { name: 'ObservationScopes' });

export const DocumentTagsBody = z
  .object({
    tags: Tags.nullable().optional().meta({ description: 'the tags every memory of the document gets' }),
  })
  .register(named, { name: 'UpdateDocument' });

export const DocumentTagsResult = z
  .object({ success: z.literal(true), document_id: z.string(), memories_updated: z.number().int() })
  .register(named, { name: 'UpdatedDocument' });

export const ChunkParams = z.object({
  chunk_id: z.string().meta({ param: { name: 'chunk_id', in: 'path' } }),
});

export const LlmHealth = z
  .object({
    bank_id: z.string(),
    operations: z.array(
      z.object({
        operation: z.enum(['retain', 'consolidation', 'reflect']),
        ok: z.boolean(),
        status: z.enum(['connected', 'not_configured', 'auth_failed', 'unreachable', 'timeout']),
        latency_ms: z.number().nullable(),
      }),
    ),
  })
  .register(named, { name: 'BankLlmHealth' });

/**
 * The bank settings Hindsight's bank create / update bodies carry beside name and mission, as
 * mnemo config keys (`retain_*`, `enable_*`, `disposition_*`), its `disposition` object, and
 * `reflect_mission` (Hindsight's name for the mission).
 */
export const HindsightBankSettings = {
  disposition: z.object({ skepticism: level, literalism: level, empathy: level }).nullable().optional(),
  disposition_skepticism: level.nullable().optional(),
  disposition_literalism: level.nullable().optional(),
  disposition_empathy: level.nullable().optional(),
  reflect_mission: z.string().max(4000).nullable().optional(),
  retain_mission: z.string().max(4000).nullable().optional(),
  retain_extraction_mode: z.string().max(32).nullable().optional(),
  retain_custom_instructions: z.string().max(4000).nullable().optional(),
  retain_chunk_size: z.number().int().nullable().optional(),
  enable_observations: z.boolean().nullable().optional(),
  observations_mission: z.string().max(4000).nullable().optional(),
  enable_temporal_retrieval: z.boolean().nullable().optional(),
  enable_graph_retrieval: z.boolean().nullable().optional(),
  enable_reranking: z.boolean().nullable().optional(),
};
