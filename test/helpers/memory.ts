/** A memory record for writing straight into a store: plain, untagged, no document or entities. */
import { randomUUID } from 'node:crypto';
import type { NewMemory } from '../../src/core/types.js';

export function newMemory(
  fields: Pick<NewMemory, 'text' | 'embedding' | 'terms'> & Partial<NewMemory>,
): NewMemory {
  return {
    id: randomUUID(),
    type: 'world',
    context: null,
    occurred_start: null,
    occurred_end: null,
    mentioned_at: new Date(),
    tags: [],
    metadata: {},
    document_id: null,
    chunk_id: null,
    content_hash: fields.text,
    entities: [],
    ...fields,
  };
}
