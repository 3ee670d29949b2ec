import { createHash } from 'node:crypto';
import { termFrequencies } from '../../text/terms.js';
import type { Services } from '../services.js';
import type { Memory, NewMemory } from '../types.js';

const time = (d: Date | null) => (d ? d.getTime() : null);

function bound(dates: (Date | null)[], pick: (a: number, b: number) => number): Date | null {
  const ms = dates.map(time).filter((t): t is number => t !== null);
  return ms.length ? new Date(ms.reduce((a, b) => pick(a, b))) : null;
}

/**
 * The stored form of an observation over its supporting memories: its own text and vector,
 * the span of time they cover, their tags (all the same set) and their entities.
 */
export async function observationMemory(
  s: Pick<Services, 'embedder'>,
  id: string,
  text: string,
  sources: Memory[],
): Promise<NewMemory> {
  const [embedding] = await s.embedder.embed([text]);
  const entities = [...new Set(sources.flatMap((m) => m.entities))];
  return {
    id,
    type: 'observation',
    text,
    context: null,
    occurred_start: bound(
      sources.map((m) => m.occurred_start ?? m.mentioned_at),
      Math.min,
    ),
    occurred_end: bound(
      sources.map((m) => m.occurred_end ?? m.occurred_start ?? m.mentioned_at),
      Math.max,
    ),
    mentioned_at: bound(
      sources.map((m) => m.mentioned_at),
      Math.max,
    ),
    tags: sources[0]?.tags ?? [],
    // Filled in from the links by the store, in the same transaction.
    metadata: {},
    document_id: null,
    chunk_id: null,
    content_hash: createHash('sha256').update(text).digest('hex').slice(0, 32),
    embedding: embedding!,
    terms: termFrequencies(text),
    // Existing entities keep their type; these names are all linked to the sources already.
    entities: entities.map((name) => ({ text: name, type: 'OTHER' })),
  };
}
