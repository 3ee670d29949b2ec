import { z } from 'zod';
import { named } from './names.js';
import { DateOut, FactTypeSchema, TagsMatchSchema } from './common.js';

/** What is known of an entity, as Hindsight shows it: memories that mention it. */
export const EntityState = z
  .object({
    entity_id: z.string(),
    canonical_name: z.string(),
    observations: z.array(z.object({ text: z.string(), mentioned_at: DateOut.nullable() })),
  })
  .register(named, { name: 'EntityState' });

export const EntityParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  entity_id: z.string().meta({ param: { name: 'entity_id', in: 'path' } }),
});

export const EntityDetail = z
  .object({
    id: z.string(),
    name: z.string(),
    canonical_name: z.string().meta({ description: 'Same as name (Hindsight’s)' }),
    type: z.string(),
    aliases: z.array(z.string()),
    mention_count: z.number().int(),
    first_seen: DateOut,
    last_seen: DateOut,
    observations: z.array(z.object({ text: z.string(), mentioned_at: DateOut.nullable() })).meta({
      description: 'memories that mention it: observations first, then the most recent (at most 20)',
    }),
  })
  .register(named, { name: 'EntityDetail' });

const limitOf = (max: number, dflt: number) =>
  z.coerce
    .number()
    .int()
    .min(0)
    .max(max)
    .optional()
    .meta({ description: `default ${dflt}, at most ${max}` });

export const EntityGraphQuery = z.object({
  limit: limitOf(5000, 1000).meta({ description: 'edges returned; default 1000, at most 5000' }),
  min_count: z.coerce.number().int().min(1).max(1_000_000).optional().meta({
    description: 'least number of memories mentioning both entities of an edge (default 1)',
  }),
});

const GraphElement = z.object({ data: z.record(z.string(), z.unknown()) });

export const EntityGraph = z
  .object({
    nodes: z.array(GraphElement).meta({ description: '`data`: id, label, type, mentionCount' }),
    edges: z.array(GraphElement).meta({
      description: '`data`: id, source, target, weight (memories mentioning both), linkType, lastCooccurred',
    }),
    total_entities: z.number().int(),
    total_edges: z.number().int().meta({ description: 'pairs seen at least min_count times' }),
    limit: z.number().int(),
  })
  .register(named, { name: 'EntityGraph' });

export const MemoryGraphQuery = z.object({
  type: FactTypeSchema.optional(),
  limit: limitOf(1000, 1000),
  q: z.string().max(500).optional(),
  tags: z
    .union([z.string().max(4000), z.array(z.string().max(128)).max(64)])
    .optional()
    .meta({ description: 'repeated, or comma-separated' }),
  tags_match: TagsMatchSchema.optional(),
  document_id: z.string().max(256).optional(),
});

export const MemoryGraph = z
  .object({
    nodes: z.array(z.object({ id: z.string(), label: z.string(), type: FactTypeSchema })),
    edges: z.array(
      z.object({
        from: z.string(),
        to: z.string(),
        type: z.string().meta({
          description: '`supports` / `contradicts` (observation to source) or `entity` (shared entities)',
        }),
        weight: z.number(),
      }),
    ),
    table_rows: z.array(z.record(z.string(), z.unknown())),
    total_units: z.number().int().meta({ description: 'memories matching the filter' }),
    limit: z.number().int(),
  })
  .register(named, { name: 'MemoryGraph' });

export const MemoryHistory = z
  .object({
    memory_id: z.string(),
    bank_id: z.string(),
    type: FactTypeSchema,
    text: z.string(),
    history: z.array(
      z.object({
        at: DateOut,
        event: z.enum([
          'retained',
          'consolidated',
          'rewritten',
          'source_added',
          'consolidated_into',
          'invalidated',
          'restored',
          'edited',
        ]),
        memory_id: z.string().optional(),
        relation: z.string().optional(),
        text: z.string().optional(),
        fields: z.array(z.string()).optional().meta({ description: 'edited: the fields a client changed' }),
      }),
    ),
  })
  .register(named, { name: 'MemoryHistory' });

/** A piece of a document: one of its memories. */
export const Chunk = z
  .object({
    chunk_id: z.string().meta({ description: 'the memory holding the piece' }),
    document_id: z.string(),
    bank_id: z.string(),
    chunk_index: z
      .number()
      .int()
      .meta({ description: 'how many pieces of the document were retained before it' }),
    chunk_text: z.string(),
    created_at: DateOut,
  })
  .register(named, { name: 'Chunk' });

export const ChunkPage = z
  .object({
    items: z.array(Chunk),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'ChunkPage' });

export const ChunkQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional().meta({ description: 'default 100' }),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});
