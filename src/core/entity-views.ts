import { countTokens } from '../text/tokens.js';
import { requireBank } from './banks.js';
import { notFound } from './errors.js';
import { isUuid } from './ids.js';
import type { Deps } from './services.js';
import type { BankStore, GraphStore, LimitStore, MemoryStore } from '../store/store.js';
import { aggregateFare } from './stats.js';
import type { Entity, Memory } from './types.js';

/** What is known of an entity, as Hindsight shows it: a few memories that mention it. */
export interface EntityState {
  entity_id: string;
  canonical_name: string;
  observations: { text: string; mentioned_at: Date | null }[];
}

/** Memories read per entity (more than a budget usually admits; the budget cuts). */
const FACTS_PER_ENTITY = 5;

/** The entities and their memories, each list in the store's order (observations, then newest). */
async function entitiesWithFacts(
  s: Deps<GraphStore & MemoryStore>,
  projectId: string,
  bankId: string,
  entityIds: string[],
  perEntity: number,
): Promise<{ entity: Entity; facts: Memory[] }[]> {
  const [entities, links] = await Promise.all([
    s.store.getEntities(projectId, bankId, entityIds),
    s.store.memoriesOfEntities(projectId, bankId, entityIds, perEntity),
  ]);
  const memories = new Map(
    (await s.store.getMemories(projectId, bankId, [...new Set(links.map((l) => l.memory_id))])).map((m) => [
      m.id,
      m,
    ]),
  );
  const byId = new Map(entities.map((e) => [e.id, e]));
  return entityIds.flatMap((id) => {
    const entity = byId.get(id);
    if (!entity) return [];
    const facts = links
      .filter((l) => l.entity_id === id)
      .map((l) => memories.get(l.memory_id))
      .filter((m): m is Memory => m !== undefined);
    return [{ entity, facts }];
  });
}

const observationOf = (m: Memory) => ({ text: m.text, mentioned_at: m.mentioned_at });

/**
 * Recall's `entities` section: the entities the results mention, in the order the results
 * first mention them, keyed by name, each with memories about it (observations first) while
 * `maxTokens` of their text last over all entities.
 */
export async function entityStates(
  s: Deps<GraphStore & MemoryStore>,
  projectId: string,
  bankId: string,
  memoryIds: string[],
  maxTokens: number,
): Promise<Record<string, EntityState>> {
  const links = await s.store.entitiesOfMemories(projectId, bankId, memoryIds);
  const rank = new Map(memoryIds.map((id, i) => [id, i]));
  const first = new Map<string, number>();
  for (const l of links) {
    const r = rank.get(l.memory_id) ?? Number.MAX_SAFE_INTEGER;
    if (r < (first.get(l.entity_id) ?? Number.MAX_SAFE_INTEGER)) first.set(l.entity_id, r);
  }
  const ordered = [...first].sort((a, b) => a[1] - b[1]).map(([id]) => id);
  // Keyed by names a client chose: no prototype for a name like `__proto__` to reach.
  const out: Record<string, EntityState> = Object.create(null);
  let left = maxTokens;
  for (const { entity, facts } of await entitiesWithFacts(s, projectId, bankId, ordered, FACTS_PER_ENTITY)) {
    const observations = [];
    for (const m of facts) {
      const cost = countTokens(m.text);
      if (cost > left) break;
      left -= cost;
      observations.push(observationOf(m));
    }
    out[entity.name] = { entity_id: entity.id, canonical_name: entity.name, observations };
  }
  return out;
}

/** Memories shown on an entity's page. */
const DETAIL_FACTS = 20;

/** An entity's page: the entity, and the memories that mention it (observations first, then newest). */
export async function entityDetail(
  s: Deps<BankStore & GraphStore & MemoryStore>,
  projectId: string,
  bankId: string,
  entityId: string,
) {
  await requireBank(s, projectId, bankId);
  const [found] = isUuid(entityId)
    ? await entitiesWithFacts(s, projectId, bankId, [entityId], DETAIL_FACTS)
    : [];
  if (!found) throw notFound(`entity '${entityId}'`);
  const { entity, facts } = found;
  return {
    ...entity,
    canonical_name: entity.name,
    observations: facts.map(observationOf),
  };
}

/**
 * Entities as nodes and how often two are mentioned by the same memory as edges, in the shape a
 * graph viewer reads (`{data: {...}}`): the `limit` most frequent pairs seen at least
 * `minCount` times, and the entities they join.
 */
export async function entityGraph(
  s: Deps<BankStore & GraphStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  q: { limit: number; minCount: number },
) {
  const pay = await aggregateFare(s, projectId, bankId);
  const { pairs, total } = await s.store.entityCooccurrences(projectId, bankId, q, pay);
  const ids = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const entities = (await s.store.getEntities(projectId, bankId, ids)).sort(
    (a, b) => b.mention_count - a.mention_count || a.name.localeCompare(b.name),
  );
  const counts = await s.store.bankCounts(projectId, bankId);
  return {
    nodes: entities.map((e) => ({
      data: { id: e.id, label: e.name, type: e.type, mentionCount: e.mention_count },
    })),
    edges: pairs.map((p) => ({
      data: {
        id: `${p.a}-${p.b}`,
        source: p.a,
        target: p.b,
        weight: p.count,
        linkType: 'cooccurrence',
        lastCooccurred: p.last,
      },
    })),
    total_entities: counts.entity_count,
    total_edges: total,
    limit: q.limit,
  };
}

/**
 * Recall answers with their `entities` section, per cached answer: a Recall served from the
 * answer cache is the same frozen object until its bank changes, so its section is read once
 * (and the whole answer serialised once) rather than on every hit. Fresh answers (encrypted
 * banks are never cached) get theirs read each time.
 */
const withSections = new WeakMap<object, Map<number | null, unknown>>();

/** The answer with its `entities` section: null when `maxTokens` is null (asked away). */
export async function withEntities<T extends { results: { id: string; entities?: readonly string[] }[] }>(
  s: Deps<GraphStore & MemoryStore>,
  projectId: string,
  bankId: string,
  answer: T,
  maxTokens: number | null,
): Promise<T & { entities: Record<string, EntityState> | null }> {
  const kept = Object.isFrozen(answer) ? withSections.get(answer) : undefined;
  const hit = kept?.get(maxTokens) as (T & { entities: Record<string, EntityState> | null }) | undefined;
  if (hit) return hit;
  // Each result names its entities (read in the Recall's snapshot): when none names any, the
  // section is empty without a statement to find their links.
  const unnamed = answer.results.every((r) => r.entities?.length === 0);
  const entities =
    maxTokens === null
      ? null
      : unnamed
        ? (Object.create(null) as Record<string, EntityState>)
        : await entityStates(
            s,
            projectId,
            bankId,
            answer.results.map((r) => r.id),
            maxTokens,
          );
  const full = { ...answer, entities };
  if (Object.isFrozen(answer)) {
    const sections = kept ?? new Map<number | null, unknown>();
    sections.set(maxTokens, Object.freeze(full));
    withSections.set(answer, sections);
  }
  return full;
}
