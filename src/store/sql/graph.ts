import type { Db } from '../db.js';
import { BY_MENTIONS } from './entities.js';
import { countRows, groupRows, type PayHops } from './offset-walk.js';
import type { Entity } from '../records.js';
import { LINK_SAMPLE } from './entities.js';

/** Below every entity id: the place of a mention with no pair after it in the graph's walk. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Mentions read by one `memoriesOfEntities` statement, over all its entities. */
const LINKS_PER_STATEMENT = 20_000;

/**
 * Mentions read per entity by `memoriesOfEntities`: a hub (the bank's owner, named in every
 * memory) would otherwise be read and sorted whole, and a Recall's entity section asks for every
 * entity of up to 100 results. Fewer per entity when many are asked, never below `perEntity`.
 */
export const linkSample = (entities: number, perEntity: number) =>
  Math.min(LINK_SAMPLE, Math.max(perEntity, Math.floor(LINKS_PER_STATEMENT / Math.max(entities, 1))));

/**
 * The links of a bank's memories and entities, read for browsing (graphs, an entity's page, a
 * memory's history). Every method but `getEntities` answers with ids and counts only: the
 * caller reads what they name through `getMemories` / `getEntities`, which open an encrypted
 * bank's sealed text.
 */
export interface GraphStore {
  /** How many entities the bank's memories mention (those `listEntities` lists), in bounded hops. */
  countEntities(projectId: string, bankId: string, pay?: PayHops): Promise<number>;
  /** Entities by id (unknown ids are left out). */
  getEntities(projectId: string, bankId: string, ids: string[]): Promise<Entity[]>;
  /** Which entities each of these memories mentions. */
  entitiesOfMemories(
    projectId: string,
    bankId: string,
    memoryIds: string[],
  ): Promise<{ memory_id: string; entity_id: string }[]>;
  /**
   * Up to `perEntity` valid memories mentioning each entity (an invalidated one is no
   * mention): observations first, then the most recently mentioned, among at most
   * `linkSample(entityIds.length)` of its mentions (all of them unless it is a hub).
   */
  memoriesOfEntities(
    projectId: string,
    bankId: string,
    entityIds: string[],
    perEntity: number,
  ): Promise<{ entity_id: string; memory_id: string }[]>;
  /**
   * Pairs of entities mentioned by the same valid memories, at least `minCount` times, most often
   * first; `total` counts every such pair. The bank's pairs are counted in hops of at most
   * SKIP_PER_STATEMENT (each past the first paid through `pay`), all of them held here at once.
   */
  entityCooccurrences(
    projectId: string,
    bankId: string,
    q: { minCount: number; limit: number },
    pay?: PayHops,
  ): Promise<{ pairs: { a: string; b: string; count: number; last: Date }[]; total: number }>;
  /**
   * Links among the valid ones of these memories (an invalidated memory links to nothing), at
   * most `limit`: an observation and a memory behind it (`supports` / `contradicts`), and two
   * memories mentioning the same entities (`entity`, weighed by how many).
   */
  memoryLinks(
    projectId: string,
    bankId: string,
    memoryIds: string[],
    limit: number,
  ): Promise<{ from: string; to: string; type: string; weight: number }[]>;
  /**
   * What consolidation did with a memory: when it was written as an observation and last
   * rewritten (null for a memory consolidation did not write), the memories behind it with when
   * each was added, and the observations it is behind.
   */
  memoryLineage(
    projectId: string,
    bankId: string,
    id: string,
  ): Promise<{
    observation: { created_at: Date; updated_at: Date } | null;
    sources: { memory_id: string; relation: string; created_at: Date }[];
    usedBy: { observation_id: string; relation: string; created_at: Date }[];
  }>;
}

export function graphQueries(db: Db): GraphStore {
  return {
    async countEntities(projectId, bankId, pay) {
      const where = 'project_id = $1 AND bank_id = $2 AND mention_count > 0';
      const listing = { from: 'entities', where, params: [projectId, bankId], order: BY_MENTIONS };
      return countRows(db, listing, null, pay);
    },
    async getEntities(projectId, bankId, ids) {
      if (ids.length === 0) return [];
      return db.query<Entity>(
        `SELECT id::text AS id, name, type, aliases, mention_count, first_seen, last_seen FROM entities
         WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[])`,
        [projectId, bankId, ids],
      );
    },

    async entitiesOfMemories(projectId, bankId, memoryIds) {
      if (memoryIds.length === 0) return [];
      return db.query(
        `SELECT memory_id::text AS memory_id, entity_id::text AS entity_id FROM memory_entities
         WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])`,
        [projectId, bankId, memoryIds],
      );
    },

    async memoriesOfEntities(projectId, bankId, entityIds, perEntity) {
      if (entityIds.length === 0) return [];
      return db.query(
        `SELECT x.entity_id::text AS entity_id, f.memory_id FROM unnest($3::uuid[]) AS x(entity_id)
         CROSS JOIN LATERAL (
           SELECT m.id::text AS memory_id FROM (
             SELECT memory_id FROM memory_entities
             WHERE project_id = $1 AND bank_id = $2 AND entity_id = x.entity_id
             ORDER BY memory_id LIMIT $5) me
           JOIN memories m ON m.project_id = $1 AND m.bank_id = $2 AND m.id = me.memory_id
           WHERE m.state = 'valid'
           ORDER BY (m.type = 'observation') DESC, m.mentioned_at DESC NULLS LAST, m.seq DESC
           LIMIT $4) f`,
        [projectId, bankId, entityIds, perEntity, linkSample(entityIds.length, perEntity)],
      );
    },

    async entityCooccurrences(projectId, bankId, q, pay) {
      // Each pair of entities a memory mentions is a row of the walk, in (memory, a, b) order, and
      // so is each mention with no pair after it (b null): a hop reads at most SKIP_PER_STATEMENT
      // mentions and pairs, however many entities a memory names or memories an entity has. A
      // mention's pairs are the memory's mentions after it in the walk's own index order, gathered
      // by a window over the memory (read once, with the hop) rather than looked up again for each
      // mention; the window reads a memory's mentions to its last, the ties of a hop's end.
      // `OFFSET 0` keeps each lookup a lookup of the hop's own rows (a join of the whole bank's
      // memories otherwise starts at its first one, whatever the hop's range).
      const counted = await groupRows(
        db,
        {
          from: `(SELECT project_id, bank_id, memory_id, entity_id,
                         array_agg(entity_id) OVER (PARTITION BY memory_id ORDER BY entity_id
                           ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS later
                    FROM memory_entities WHERE project_id = $1 AND bank_id = $2) a
            LEFT JOIN LATERAL unnest(a.later) AS b(entity_id) ON true
            CROSS JOIN LATERAL (
              SELECT state, coalesce(mentioned_at, created_at) AS at FROM memories
               WHERE project_id = a.project_id AND bank_id = a.bank_id AND id = a.memory_id OFFSET 0) m`,
          where: 'true',
          params: [projectId, bankId],
          order: [
            { expr: 'a.memory_id', type: 'uuid' },
            { expr: 'a.entity_id', type: 'uuid' },
            { expr: `coalesce(b.entity_id, '${NIL_UUID}'::uuid)`, type: 'uuid' },
          ],
        },
        {
          group: { a: 'a.entity_id::text', b: 'b.entity_id::text' },
          aggregates: { count: { fn: 'count' }, last: { fn: 'max', expr: 'm.at' } },
          filter: () => "b.entity_id IS NOT NULL AND m.state = 'valid'",
        },
        pay,
      );
      // uuids as text (lower-case hex) sort as the uuids do.
      const pairs = counted
        .map((p) => ({ a: p.a as string, b: p.b as string, count: p.count as number, last: p.last as Date }))
        .filter((p) => p.count >= q.minCount)
        .sort(
          (x, y) =>
            y.count - x.count || (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0),
        );
      return { pairs: pairs.slice(0, q.limit), total: pairs.length };
    },

    async memoryLinks(projectId, bankId, asked, limit) {
      if (asked.length === 0) return [];
      // An invalidated memory links to nothing, as it is no mention of its entities.
      const memoryIds = (
        await db.query<{ id: string }>(
          `SELECT id::text AS id FROM memories
            WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[]) AND state = 'valid'`,
          [projectId, bankId, asked],
        )
      ).map((r) => r.id);
      if (memoryIds.length === 0) return [];
      const sources = await db.query<{ from: string; to: string; type: string; weight: number }>(
        `SELECT observation_id::text AS from, memory_id::text AS to, relation AS type, 1 AS weight
           FROM observation_sources
          WHERE project_id = $1 AND bank_id = $2
            AND observation_id = ANY($3::uuid[]) AND memory_id = ANY($3::uuid[])
          ORDER BY observation_id, memory_id LIMIT $4`,
        [projectId, bankId, memoryIds, limit],
      );
      const shared = await db.query<{ from: string; to: string; type: string; weight: number }>(
        `SELECT a.memory_id::text AS from, b.memory_id::text AS to, 'entity' AS type, count(*)::int AS weight
           FROM memory_entities a
           JOIN memory_entities b
             ON b.project_id = a.project_id AND b.bank_id = a.bank_id AND b.entity_id = a.entity_id
            AND b.memory_id > a.memory_id
          WHERE a.project_id = $1 AND a.bank_id = $2
            AND a.memory_id = ANY($3::uuid[]) AND b.memory_id = ANY($3::uuid[])
          GROUP BY a.memory_id, b.memory_id
          ORDER BY weight DESC, a.memory_id, b.memory_id LIMIT $4`,
        [projectId, bankId, memoryIds, Math.max(limit - sources.length, 0)],
      );
      return [...sources, ...shared];
    },

    async memoryLineage(projectId, bankId, id) {
      const args = [projectId, bankId, id];
      const obs = await db.query<{ created_at: Date; updated_at: Date }>(
        'SELECT created_at, updated_at FROM observations WHERE project_id = $1 AND bank_id = $2 AND id = $3',
        args,
      );
      const sources = await db.query<{ memory_id: string; relation: string; created_at: Date }>(
        `SELECT memory_id::text AS memory_id, relation, created_at FROM observation_sources
          WHERE project_id = $1 AND bank_id = $2 AND observation_id = $3 ORDER BY created_at, memory_id`,
        args,
      );
      const usedBy = await db.query<{ observation_id: string; relation: string; created_at: Date }>(
        `SELECT observation_id::text AS observation_id, relation, created_at FROM observation_sources
          WHERE project_id = $1 AND bank_id = $2 AND memory_id = $3 ORDER BY created_at, observation_id`,
        args,
      );
      return { observation: obs[0] ?? null, sources, usedBy };
    },
  };
}
