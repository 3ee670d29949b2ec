import type { Hit } from '../records.js';
import type { Db } from '../db.js';
import type { Entity, MemoryFilter, Page } from '../records.js';
import { cursorText, decodeCursor, encodeCursor, filterClauses } from './filters.js';
import { type OrderKey, type PayHops, rowsAfter, skipRows } from './offset-walk.js';

/** The listing's order, most mentioned first (index entities_bank_mentions, migration 45). */
export const BY_MENTIONS: OrderKey[] = [
  { expr: 'mention_count', type: 'int', desc: true },
  { expr: 'name_key', type: 'text' },
];

/** A bank's entities: their listing and Recall's graph channel. */
export interface EntityStore {
  /** Most mentioned first; paged by `cursor`, or by `offset` when there is none. */
  listEntities(
    projectId: string,
    bankId: string,
    page: { limit: number; cursor?: string; offset?: number; pay?: PayHops },
  ): Promise<Page<Entity>>;
  /**
   * Memories linked to the entities named by `probes` (entity names or aliases, any case) and,
   * with `depth` 1 or 2, to the entities co-mentioned with them; scored in [0, 1].
   */
  graphSearch(
    projectId: string,
    bankId: string,
    probes: string[],
    filter: MemoryFilter,
    limit: number,
    depth: number,
  ): Promise<Hit[]>;
}

/** Neighbour entities kept per hop: the ones co-mentioned most often with the hop before. */
const NEIGHBOURS = 8;
/** Links read per entity: bounds the work on hub entities (a speaker in every memory). */
export const LINK_SAMPLE = 2000;
/** Weight of an entity one hop further from the query. */
const HOP_DECAY = 0.5;

/**
 * The graph channel as one query over `$1` (project), `$2` (bank) and `$3` (limit), pushing its
 * own parameters: (id, score, k1, k2) rows, best first by k1, then by k2 descending; null when
 * no probe is left. Each
 * probe is an entity name or alias; the entities it names are the seeds, weighted by IDF over
 * memories, ln(1 + N / mentions), so a rare name counts more than the bank owner's. Found by
 * index (names, and aliases through entity_keys, migration 16), never a scan of the bank. Each
 * hop keeps the entities co-mentioned most with the previous one, at HOP_DECAY times their own
 * weight. `where`: filter clauses over alias `m` whose parameters are in `params` already.
 */
export function graphChannelSql(
  params: unknown[],
  probes: string[],
  depth: number,
  where: string,
): string | null {
  const keys = [...new Set(probes.map((p) => p.trim().toLowerCase()).filter(Boolean))];
  if (keys.length === 0) return null;
  params.push(
    keys,
    keys.map((k) => `a:${k}`),
  );
  const [names, aliases] = [`$${params.length - 1}`, `$${params.length}`];
  const hop = (from: string, exclude: string, decay: number) => `
    SELECT me2.entity_id AS id, ${decay} * ln(1 + max(bank.n) / greatest(max(e.mention_count), 1)) AS w
    FROM ${from} f
    CROSS JOIN LATERAL (SELECT memory_id FROM memory_entities
      WHERE project_id = $1 AND bank_id = $2 AND entity_id = f.id ORDER BY memory_id LIMIT ${LINK_SAMPLE}) l
    JOIN memory_entities me2 ON me2.project_id = $1 AND me2.bank_id = $2 AND me2.memory_id = l.memory_id
    JOIN entities e ON e.project_id = $1 AND e.bank_id = $2 AND e.id = me2.entity_id
    CROSS JOIN bank
    WHERE me2.entity_id NOT IN (${exclude})
    GROUP BY me2.entity_id, e.name_key ORDER BY count(*) DESC, e.name_key LIMIT ${NEIGHBOURS}`;
  const hops = [
    depth >= 1 ? `hop1 AS (${hop('seeds', 'SELECT id FROM seeds', HOP_DECAY)}),` : '',
    depth >= 2
      ? `hop2 AS (${hop('hop1', 'SELECT id FROM seeds UNION ALL SELECT id FROM hop1', HOP_DECAY * HOP_DECAY)}),`
      : '',
  ].join('');
  const weighted = [
    'SELECT id, w FROM seeds',
    depth >= 1 ? 'SELECT id, w FROM hop1' : '',
    depth >= 2 ? 'SELECT id, w FROM hop2' : '',
  ]
    .filter(Boolean)
    .join(' UNION ALL ');
  // Most queries name no known entity: the seeds are then empty and the hops read nothing.
  return `WITH bank AS (SELECT greatest(memory_count, 1)::float8 AS n FROM banks WHERE project_id = $1 AND id = $2),
     seeds AS MATERIALIZED (
       SELECT e.id, ln(1 + bank.n / greatest(e.mention_count, 1)) AS w FROM entities e CROSS JOIN bank
       WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id IN (
         SELECT n.id FROM entities n WHERE n.project_id = $1 AND n.bank_id = $2 AND n.name_key = ANY(${names}::text[])
         UNION
         SELECT k.entity_id FROM entity_keys k WHERE k.project_id = $1 AND k.bank_id = $2 AND k.key = ANY(${aliases}::text[]))),
     ${hops}
     weighted AS (${weighted}),
     links AS (
       SELECT l.memory_id, wt.w FROM weighted wt
       CROSS JOIN LATERAL (SELECT memory_id FROM memory_entities
         WHERE project_id = $1 AND bank_id = $2 AND entity_id = wt.id ORDER BY memory_id LIMIT ${LINK_SAMPLE}) l)
     SELECT m.id::text AS id, least(1, sum(links.w) / (SELECT sum(w) FROM seeds))::float8 AS score,
       (-sum(links.w))::float8 AS k1, m.seq AS k2
     FROM links
     JOIN memories m ON m.project_id = $1 AND m.bank_id = $2 AND m.id = links.memory_id
     WHERE true${where}
     GROUP BY m.id, m.seq ORDER BY sum(links.w) DESC, m.seq DESC LIMIT $3`;
}

/** A bank's entities: their listing (paged by an opaque cursor) and the graph channel of Recall. */
export function entityQueries(db: Db): EntityStore {
  return {
    async graphSearch(projectId, bankId, probes, filter, limit, depth) {
      const params: unknown[] = [projectId, bankId, limit];
      const sql = graphChannelSql(params, probes, depth, filterClauses(filter, params));
      if (!sql) return [];
      return db.query<Hit>(`SELECT id, score FROM (${sql}) g ORDER BY k1, k2 DESC`, params);
    },

    async listEntities(projectId, bankId, page) {
      // Most mentioned first. The cursor is the last entity's place in that order (`count~name_key`);
      // an earlier version's cursor, an offset, is still read as one.
      const params: unknown[] = [projectId, bankId];
      let where = 'project_id = $1 AND bank_id = $2 AND mention_count > 0';
      const text = cursorText(page.cursor);
      const cut = text.indexOf('~');
      if (cut > 0 && /^\d+$/.test(text.slice(0, cut))) {
        where += rowsAfter(BY_MENTIONS, [text.slice(0, cut), text.slice(cut + 1)], params);
      } else {
        const offset = decodeCursor(page.cursor) ?? page.offset ?? 0;
        where += await skipRows(
          db,
          { from: 'entities', where, params, order: BY_MENTIONS },
          offset,
          page.pay,
        );
      }
      params.push(page.limit + 1);
      const rows = await db.query<Entity & { name_key: string }>(
        `SELECT id::text AS id, name, type, aliases, mention_count, first_seen, last_seen, name_key FROM entities
         WHERE ${where} ORDER BY mention_count DESC, name_key LIMIT $${params.length}`,
        params,
      );
      const items = rows.slice(0, page.limit);
      const last = items.at(-1);
      return {
        items: items.map(({ name_key: _k, ...e }) => e),
        next_cursor:
          rows.length > page.limit && last ? encodeCursor(`${last.mention_count}~${last.name_key}`) : null,
      };
    },
  };
}
