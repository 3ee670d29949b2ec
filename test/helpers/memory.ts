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

/** A unit vector of 100 numbers, the same for the same seed (bank-sized vector fixtures). */
export function seededVector(seed: number): Float32Array {
  const v = new Float32Array(100);
  for (let i = 0; i < v.length; i++) v[i] = Math.sin(seed * 12.9898 + i * 78.233);
  const norm = Math.hypot(...v);
  return v.map((a) => a / norm);
}
