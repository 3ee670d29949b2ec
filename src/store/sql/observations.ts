import type { ConsolidationSource, Memory, ObservationChange, ObservationDetail } from '../records.js';
import type { Hit } from '../records.js';
import type { Db, Queryable } from '../db.js';
import { EXACT_SEARCH_LIMIT } from '../exact-search.js';
import { vectorLiteral } from './filters.js';
import { lockBank } from './bank-lock.js';
import { checkStoredQuotaIn, lockStoredQuotaIn } from './limits.js';
import { deleteMemoriesIn, insertMemoriesIn, MEMORY_SELECT, readByIds } from './memories.js';
import { HNSW_DIMENSIONS } from './search.js';

/** Consolidation: its cursor, sources and candidates, and the observations it writes and prunes. */
export interface ObservationStore {
  /** The highest memory seq consolidation has processed (0 before the first run). */
  consolidationCursor(projectId: string, bankId: string): Promise<number>;
  /**
   * Memories after `afterSeq` other than consolidated observations, oldest first. With `redo`,
   * instead the memories marked for consolidation again (their observation was deleted by a
   * forget: `consolidation_redo`), whatever their seq.
   */
  consolidationSources(
    projectId: string,
    bankId: string,
    afterSeq: number,
    limit: number,
    opts?: { redo?: boolean },
  ): Promise<ConsolidationSource[]>;
  /**
   * Nearest memories with exactly these tags: consolidated observations, or other memories
   * retained before `beforeSeq` that support no observation yet. `bankSize`: the bank's memory
   * count as the caller read it (past the exact-search size, memories are found by the index).
   */
  consolidationCandidates(
    projectId: string,
    bankId: string,
    vector: Float32Array,
    opts: { observations: boolean; tags: string[]; beforeSeq: number; limit: number; bankSize: number },
  ): Promise<Hit[]>;
  /** Proof and conflicts of consolidated observations; ids that are not ones are left out. */
  observationDetails(
    projectId: string,
    bankId: string,
    ids: string[],
  ): Promise<Map<string, ObservationDetail>>;
  /**
   * Applies one consolidation step and moves the cursor from `from` to `to` in one transaction;
   * false (and nothing written) when another run moved the cursor first. With
   * `storedQuotaDefault` (as for `insertMemories`) a step creating an observation is checked
   * against the project's `stored_memories` quota in the same transaction: past it, the step
   * throws `StoredQuotaExceeded`, writing nothing and leaving the cursor where it was. `redo`:
   * the step consolidated this memory again, whose mark (`consolidation_redo`) goes in the same
   * transaction.
   */
  saveObservation(
    projectId: string,
    bankId: string,
    change: ObservationChange | null,
    cursor: { from: number; to: number; redo?: string },
    opts?: { storedQuotaDefault?: number | null },
  ): Promise<boolean>;
  /**
   * Deletes consolidated observations left with no supporting memory, and refreshes stale proof
   * counts, over one page of the bank's observations (ids after `page.after`, default the first
   * 500); `next` is where the next page starts, null after the last.
   */
  pruneObservations(
    projectId: string,
    bankId: string,
    page?: { after: string; limit: number },
  ): Promise<{ pruned: number; next: string | null }>;
}

/**
 * Whether memory `m` is an observation consolidation wrote. Memories retained with (or
 * classified as) type `observation` are ordinary memories to consolidation.
 */
const CONSOLIDATED = `EXISTS (SELECT 1 FROM observations o WHERE o.project_id = m.project_id AND o.bank_id = m.bank_id AND o.id = m.id)`;

/** Observations checked per pruneObservations call. */
const PRUNE_PAGE = 500;

const parseVector = (text: string) => Float32Array.from(JSON.parse(text) as number[]);

/** Counts of an observation's links by relation, over alias `m` (the observation memory). */
const linkCount = (relation: string) =>
  `(SELECT count(*) FROM observation_sources s WHERE s.project_id = m.project_id AND s.bank_id = m.bank_id
     AND s.observation_id = m.id AND s.relation = '${relation}')`;
const linkIds = (relation: string) =>
  `coalesce((SELECT jsonb_agg(s.memory_id::text ORDER BY s.created_at, s.memory_id) FROM observation_sources s
     WHERE s.project_id = m.project_id AND s.bank_id = m.bank_id AND s.observation_id = m.id
       AND s.relation = '${relation}'), '[]')`;

/**
 * Rewrites observations' metadata from their links, so listings and Recall results show the
 * proof count, sources and conflicts without another query.
 */
async function refreshMetadata(
  tx: Queryable,
  projectId: string,
  bankId: string,
  ids: string[],
): Promise<void> {
  await tx.query(
    `UPDATE memories m SET metadata = jsonb_build_object(
       'proof_count', ${linkCount('supports')},
       'source_memory_ids', ${linkIds('supports')},
       'contradicted', ${linkCount('contradicts')} > 0,
       'contradicting_memory_ids', ${linkIds('contradicts')})
     WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = ANY($3::uuid[])`,
    [projectId, bankId, ids],
  );
}

/** Observations: consolidation's cursor, candidates and atomic writes. */
export function observationQueries(db: Db): ObservationStore {
  return {
    async consolidationCursor(projectId, bankId) {
      const rows = await db.query<{ last_seq: number }>(
        'SELECT last_seq::float8 AS last_seq FROM consolidation_state WHERE project_id = $1 AND bank_id = $2',
        [projectId, bankId],
      );
      return rows[0]?.last_seq ?? 0;
    },

    async consolidationSources(projectId, bankId, afterSeq, limit, opts = {}) {
      const which = opts.redo
        ? `EXISTS (SELECT 1 FROM consolidation_redo r WHERE r.project_id = m.project_id AND r.bank_id = m.bank_id
             AND r.memory_id = m.id) AND $3::bigint IS NOT NULL`
        : 'm.seq > $3';
      const heads = await db.query<{ id: string; seq: number; embedding: string | null }>(
        `SELECT m.id::text AS id, m.seq::float8 AS seq, m.embedding::text AS embedding FROM memories m
         WHERE m.project_id = $1 AND m.bank_id = $2 AND ${which} AND NOT ${CONSOLIDATED} AND m.state = 'valid'
         ORDER BY m.seq LIMIT $4`,
        [projectId, bankId, afterSeq, limit],
      );
      if (heads.length === 0) return [];
      const rows = await readByIds(
        heads.map((h) => h.id),
        (part) =>
          db.query<Memory & { seq: number }>(
            `${MEMORY_SELECT} WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = ANY($3::uuid[])`,
            [projectId, bankId, part],
          ),
      );
      const byId = new Map(rows.map(({ seq: _seq, ...m }) => [m.id, m]));
      return heads.flatMap((h): ConsolidationSource[] => {
        const m = byId.get(h.id);
        if (!m) return [];
        return [
          { ...m, seq: h.seq, embedding: h.embedding ? parseVector(h.embedding) : new Float32Array(0) },
        ];
      });
    },

    consolidationCandidates(projectId, bankId, vector, opts) {
      // Observations are reached from their registry, so only they are compared with the vector.
      const from = opts.observations
        ? 'observations o JOIN memories m ON m.project_id = o.project_id AND m.bank_id = o.bank_id AND m.id = o.id'
        : 'memories m';
      // Written as NOT IN so that each list is read once into a hash, not probed per memory.
      const which = opts.observations
        ? 'o.project_id = $1 AND o.bank_id = $2'
        : `m.seq < $6
           AND m.state = 'valid'
           AND m.id NOT IN (SELECT o.id FROM observations o WHERE o.project_id = $1 AND o.bank_id = $2)
           AND m.id NOT IN (SELECT s.memory_id FROM observation_sources s
             WHERE s.project_id = $1 AND s.bank_id = $2 AND s.relation = 'supports')`;
      const dims = vector.length;
      // Earlier memories of a big bank are found through its HNSW index (as Recall's semantic
      // channel does): an exact scan per consolidated memory made consolidating an import
      // quadratic. Observations are few, and scanned; so are the memories of a small bank.
      const indexed =
        !opts.observations &&
        (HNSW_DIMENSIONS as readonly number[]).includes(dims) &&
        opts.bankSize > EXACT_SEARCH_LIMIT;
      const distance = indexed
        ? `(m.embedding::vector(${dims})) <=> $3::vector(${dims})`
        : 'm.embedding <=> $3::vector';
      // Exactly the same tag set: an observation never mixes memories of different visibility.
      const search = (q: Queryable) =>
        q.query<Hit>(
          `SELECT m.id::text AS id, 1 - (${distance}) AS score FROM ${from}
           WHERE m.project_id = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL
             AND vector_dims(m.embedding) = ${dims}
             AND m.tags @> $4::text[] AND m.tags <@ $4::text[] AND ${which}
           ORDER BY ${distance} LIMIT $5`,
          [
            projectId,
            bankId,
            vectorLiteral(vector),
            opts.tags,
            opts.limit,
            ...(opts.observations ? [] : [opts.beforeSeq]),
          ],
        );
      if (!indexed) return search(db);
      return db.transaction(async (tx) => {
        await tx.query(
          `SELECT set_config('hnsw.iterative_scan', 'strict_order', true), set_config('hnsw.ef_search', '100', true),
             set_config('plan_cache_mode', 'force_custom_plan', true)`,
        );
        return search(tx);
      });
    },

    async observationDetails(projectId, bankId, ids) {
      if (ids.length === 0) return new Map();
      const rows = await db.query<{ id: string; memory_id: string | null; relation: string | null }>(
        `SELECT o.id::text AS id, s.memory_id::text AS memory_id, s.relation FROM observations o
         LEFT JOIN observation_sources s ON s.project_id = o.project_id AND s.bank_id = o.bank_id AND s.observation_id = o.id
         WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = ANY($3::uuid[])
         ORDER BY s.created_at, s.memory_id`,
        [projectId, bankId, ids],
      );
      const out = new Map<string, ObservationDetail>();
      for (const r of rows) {
        let d = out.get(r.id);
        if (!d) {
          d = { id: r.id, proof_count: 0, source_memory_ids: [], contradicting_memory_ids: [] };
          out.set(r.id, d);
        }
        if (r.memory_id === null) continue;
        if (r.relation === 'supports') d.source_memory_ids.push(r.memory_id);
        else d.contradicting_memory_ids.push(r.memory_id);
        d.proof_count = d.source_memory_ids.length;
      }
      return out;
    },

    async saveObservation(projectId, bankId, change, cursor, opts = {}) {
      return db.transaction(async (tx) => {
        // A step that may add a memory takes the project's quota lock first, as Retain's writes do.
        const quota =
          opts.storedQuotaDefault !== undefined && change?.memory
            ? await lockStoredQuotaIn(tx, projectId, opts.storedQuotaDefault)
            : null;
        // The bank lock next, as every memory writer takes it, then the cursor as a compare-and-set.
        await lockBank(tx, projectId, bankId);
        await tx.query(
          'INSERT INTO consolidation_state (project_id, bank_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
          [projectId, bankId],
        );
        const moved = await tx.query(
          `UPDATE consolidation_state SET last_seq = $4, updated_at = now()
           WHERE project_id = $1 AND bank_id = $2 AND last_seq = $3 RETURNING 1`,
          [projectId, bankId, cursor.from, cursor.to],
        );
        if (moved.length === 0) return false;
        if (cursor.redo) {
          await tx.query(
            'DELETE FROM consolidation_redo WHERE project_id = $1 AND bank_id = $2 AND memory_id = $3',
            [projectId, bankId, cursor.redo],
          );
        }
        if (!change) return true;
        if (change.memory) {
          // A rewrite replaces the stored memory (text, vector, terms, entities) under the same id;
          // its links survive in a temporary copy because the delete cascades to them.
          const kept = await tx.query<{ memory_id: string; relation: string; created_at: Date }>(
            `SELECT memory_id::text AS memory_id, relation, created_at FROM observation_sources
             WHERE project_id = $1 AND bank_id = $2 AND observation_id = $3`,
            [projectId, bankId, change.id],
          );
          const existed = await tx.query<{ created_at: Date }>(
            'SELECT created_at FROM observations WHERE project_id = $1 AND bank_id = $2 AND id = $3',
            [projectId, bankId, change.id],
          );
          // A rewrite stores as many memories as before; a new observation is one more.
          if (quota !== null && existed.length === 0) await checkStoredQuotaIn(tx, projectId, quota, 1);
          await deleteMemoriesIn(tx, projectId, bankId, { ids: [change.id] });
          await insertMemoriesIn(tx, projectId, bankId, [change.memory]);
          await tx.query(
            `INSERT INTO observations (project_id, bank_id, id, writer, created_at) VALUES ($1, $2, $3, $4, coalesce($5, now()))`,
            [projectId, bankId, change.id, change.writer, existed[0]?.created_at ?? null],
          );
          if (kept.length) {
            await tx.query(
              `INSERT INTO observation_sources (project_id, bank_id, observation_id, memory_id, relation, created_at)
               SELECT $1, $2, $3, r.memory_id, r.relation, r.created_at
               FROM jsonb_to_recordset($4::jsonb) AS r(memory_id uuid, relation text, created_at timestamptz)`,
              [projectId, bankId, change.id, JSON.stringify(kept)],
            );
          }
        } else {
          await tx.query(
            'UPDATE observations SET writer = $4, updated_at = now() WHERE project_id = $1 AND bank_id = $2 AND id = $3',
            [projectId, bankId, change.id, change.writer],
          );
        }
        if (change.links.length) {
          // A memory's latest verdict on the observation wins, so linking again changes nothing;
          // a memory deleted since the step was planned is skipped.
          await tx.query(
            `INSERT INTO observation_sources (project_id, bank_id, observation_id, memory_id, relation)
             SELECT $1, $2, $3, r.m, r.r FROM jsonb_to_recordset($4::jsonb) AS r(m uuid, r text)
             WHERE EXISTS (SELECT 1 FROM memories x WHERE x.project_id = $1 AND x.bank_id = $2 AND x.id = r.m)
             ON CONFLICT (project_id, bank_id, observation_id, memory_id) DO UPDATE SET relation = excluded.relation`,
            [
              projectId,
              bankId,
              change.id,
              JSON.stringify(change.links.map((l) => ({ m: l.memoryId, r: l.relation }))),
            ],
          );
        }
        await refreshMetadata(tx, projectId, bankId, [change.id]);
        return true;
      });
    },

    async pruneObservations(projectId, bankId, page = { after: '', limit: PRUNE_PAGE }) {
      return db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        // One page of observations (by id) per call: a bank's whole set at once held the bank
        // lock, and on the embedded engine the event loop, for as long as it took.
        const ids = (
          await tx.query<{ id: string }>(
            `SELECT id::text AS id FROM observations WHERE project_id = $1 AND bank_id = $2
               AND id > coalesce(nullif($3, '')::uuid, '00000000-0000-0000-0000-000000000000')
             ORDER BY id LIMIT $4`,
            [projectId, bankId, page.after, page.limit],
          )
        ).map((r) => r.id);
        const next = ids.length === page.limit ? ids.at(-1)! : null;
        if (ids.length === 0) return { pruned: 0, next };
        const orphans = await tx.query<{ id: string }>(
          `SELECT o.id::text AS id FROM observations o
           WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = ANY($3::uuid[]) AND NOT EXISTS (
             SELECT 1 FROM observation_sources s WHERE s.project_id = o.project_id AND s.bank_id = o.bank_id
               AND s.observation_id = o.id AND s.relation = 'supports')`,
          [projectId, bankId, ids],
        );
        const pruned = orphans.length
          ? await deleteMemoriesIn(tx, projectId, bankId, { ids: orphans.map((o) => o.id) })
          : 0;
        // Deleting a source memory drops its link (cascade) but not the count in the metadata.
        const stale = await tx.query<{ id: string }>(
          `SELECT m.id::text AS id FROM observations o
           JOIN memories m ON m.project_id = o.project_id AND m.bank_id = o.bank_id AND m.id = o.id
           WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = ANY($3::uuid[]) AND (
             (m.metadata->>'proof_count')::int IS DISTINCT FROM ${linkCount('supports')}
             OR jsonb_array_length(coalesce(m.metadata->'contradicting_memory_ids', '[]')) IS DISTINCT FROM ${linkCount('contradicts')})`,
          [projectId, bankId, ids],
        );
        if (stale.length)
          await refreshMetadata(
            tx,
            projectId,
            bankId,
            stale.map((r) => r.id),
          );
        return { pruned, next };
      });
    },
  };
}
