import { z } from 'zod';

const level = z.number().int().min(1).max(5);

/** Every bank config key with its type and default. The schema is the validation. */
export const BANK_CONFIG_SCHEMA = z.object({
  // Hindsight calls verbatim storage 'verbatim'; it is our 'chunks'.
  retain_extraction_mode: z
    .preprocess((v) => (v === 'verbatim' ? 'chunks' : v), z.enum(['concise', 'verbose', 'chunks', 'custom']))
    .default('chunks'),
  retain_auto_entities: z.boolean().default(false),
  retain_custom_instructions: z.string().max(4000).nullable().default(null),
  /** What extraction should look for, added to the built-in rules (Hindsight's retain_mission). */
  retain_mission: z.string().max(4000).nullable().default(null),
  /** Longest verbatim chunk in characters (about four per token); null: 4,000. */
  retain_chunk_size: z.number().int().min(200).max(100_000).nullable().default(null),
  /** The bank's mission for Reflect when no identity mission is set (Hindsight's reflect_mission). */
  reflect_mission: z.string().max(4000).nullable().default(null),
  enable_observations: z.boolean().default(true),
  observations_mission: z.string().max(4000).nullable().default(null),
  encryption: z.enum(['none', 'managed']).default('none'),
  enable_temporal_retrieval: z.boolean().default(true),
  enable_graph_retrieval: z.boolean().default(true),
  enable_reranking: z.boolean().default(true),
  disposition_skepticism: level.default(3),
  disposition_literalism: level.default(3),
  disposition_empathy: level.default(3),
  recall_default_budget: z.enum(['low', 'mid', 'high']).default('mid'),
});
