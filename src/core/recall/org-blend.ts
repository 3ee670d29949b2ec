import type { Services } from '../services.js';
import type { Memory } from '../types.js';
import { fuse } from './fuse.js';

interface Scored {
  memory: Memory;
  scores: Record<string, number> & { final: number };
}

/** Cosine similarity above which two memories about the same subject say the same kind of thing. */
export const SAME_MEANING = 0.45;
/** The org bank's weight in fusion: it sits under the person's memories. */
const ORG_WEIGHT = 0.7;

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);

/**
 * Blends org memories under person memories. An org memory about the same subject as a person
 * memory (a shared entity) and close in meaning is dropped: the person's memory wins, whether
 * they agree (redundant) or conflict. Unrelated org memories stay. Deterministic.
 */
export async function resolveOrgConflicts<T extends Scored>(
  s: Pick<Services, 'embedder'>,
  person: T[],
  org: T[],
): Promise<T[]> {
  if (org.length === 0) return person;
  // Same subject first (a shared entity, cheap); only those pairs are compared in meaning, so
  // a remote embedder sees a handful of texts, not every result.
  const keys = (r: T) => new Set(r.memory.entities.map((e) => e.toLowerCase()));
  const personKeys = person.map(keys);
  const pairs = org.map((o) => {
    const k = keys(o);
    return person.flatMap((_, i) => ([...personKeys[i]!].some((e) => k.has(e)) ? [i] : []));
  });
  const involved = [
    ...new Set(pairs.flatMap((ps, j) => (ps.length ? [`o${j}`, ...ps.map((i) => `p${i}`)] : []))),
  ];
  const textOf = (key: string) => (key[0] === 'o' ? org : person)[Number(key.slice(1))]!.memory.text;
  const vectors = involved.length ? await s.embedder.embed(involved.map(textOf)) : [];
  const vectorOf = new Map(involved.map((key, n) => [key, vectors[n]!]));
  const keptOrg = org.filter(
    (_, j) => !pairs[j]!.some((i) => dot(vectorOf.get(`p${i}`)!, vectorOf.get(`o${j}`)!) >= SAME_MEANING),
  );
  const all = new Map<string, T>(
    [...person, ...keptOrg].map((r) => [`${r.memory.bank_id}\u0000${r.memory.id}`, r]),
  );
  const fused = fuse([
    { channel: 'person', weight: 1, ids: person.map((r) => `${r.memory.bank_id}\u0000${r.memory.id}`) },
    {
      channel: 'org',
      weight: ORG_WEIGHT,
      ids: keptOrg.map((r) => `${r.memory.bank_id}\u0000${r.memory.id}`),
    },
  ]);
  return fused.map((f) => all.get(f.id)!);
}
