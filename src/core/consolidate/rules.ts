import { randomUUID } from 'node:crypto';
import type { Deps } from '../services.js';
import type { MemoryStore } from '../../store/store.js';
import type { Memory, ObservationChange, ObservationDetail } from '../types.js';
import { judge, specificity } from './judge.js';
import { observationMemory } from './observation.js';
import type { Neighbourhood, Step } from './step.js';

/** Supporting memories of an observation, for rewriting it. */
async function sourcesOf(
  s: Deps<MemoryStore>,
  projectId: string,
  bankId: string,
  detail: ObservationDetail | undefined,
) {
  return detail ? s.store.getMemories(projectId, bankId, detail.source_memory_ids) : [];
}

/**
 * The step the rules take for a new memory: join the first related observation (supporting,
 * refining or contradicting it), else found a new observation with the plain memories that
 * agree with it (or conflict with it); a memory related to nothing waits for company.
 */
export async function planByRules(
  s: Deps<MemoryStore, 'embedder'>,
  projectId: string,
  bankId: string,
  n: Neighbourhood,
): Promise<Step | null> {
  const m = n.memory;
  for (const o of n.observations) {
    const relation = judge(m.text, o.text, { next: m.entities, earlier: o.entities });
    if (relation === 'unrelated') continue;
    const change: ObservationChange = {
      id: o.id,
      writer: 'rules',
      links: [{ memoryId: m.id, relation: relation === 'contradicts' ? 'contradicts' : 'supports' }],
    };
    if (relation === 'refines') {
      const sources = await sourcesOf(s, projectId, bankId, n.details.get(o.id));
      change.memory = await observationMemory(s, o.id, m.text, [...sources, m]);
    }
    return { change, created: false, contradiction: relation === 'contradicts' };
  }
  const agree: Memory[] = [m];
  const conflict: Memory[] = [];
  for (const r of n.memories) {
    const relation = judge(m.text, r.text, { next: m.entities, earlier: r.entities });
    if (relation === 'same' || relation === 'refines') agree.push(r);
    else if (relation === 'contradicts') conflict.push(r);
  }
  if (agree.length < 2 && conflict.length === 0) return null;
  // The most specific wording speaks for the group; the newest (the new memory) breaks ties.
  const text = agree.reduce((best, x) => (specificity(x.text) > specificity(best.text) ? x : best)).text;
  const id = randomUUID();
  return {
    change: {
      id,
      writer: 'rules',
      memory: await observationMemory(s, id, text, agree),
      links: [
        ...agree.map((x) => ({ memoryId: x.id, relation: 'supports' as const })),
        ...conflict.map((x) => ({ memoryId: x.id, relation: 'contradicts' as const })),
      ],
    },
    created: true,
    contradiction: conflict.length > 0,
  };
}
