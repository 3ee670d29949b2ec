import type { MemoryState, NewMemory } from '../records.js';
import type { Db, Queryable } from '../db.js';
import { lockBank } from './bank-lock.js';
import { lockBankForWrite } from './encryption.js';
import { vectorLiteral } from './filters.js';
import {
  deleteMemoriesIn,
  dropPostingsIn,
  indexMemoriesIn,
  termCountOf,
  unindexMemoriesIn,
} from './memories.js';

/** One change a client made to a memory (PATCH .../memories/{id}). */
export interface MemoryCuration {
  /** The new state; a `reason` is kept with `invalidated` only. */
  state?: MemoryState;
  reason?: string | null;
  /**
   * New content, prepared by core from the memory at `revision` (text, terms, entities, vector):
   * written only if the memory is still at that revision. `fields`: what the client changed.
   */
  content?: { memory: NewMemory; revision: number; fields: string[] };
}

/** What a curation did: or why it did nothing. */
export type CurationOutcome =
  | { done: true; observationsDeleted: number; requeued: number }
  | { done: false; reason: 'missing' | 'observation' | 'stale' };

/** A curation event of a memory's history. */
export interface CurationEvent {
  at: Date;
  event: 'invalidated' | 'restored' | 'edited';
  fields: string[];
}

/** Curation of single memories: their state, edits, and the observations derived from them. */
export interface CurationStore {
  /**
   * The memory's curation revision and whether consolidation wrote it (an observation, which
   * is derived and not curated); null when there is no such memory.
   */
  curationBase(
    projectId: string,
    bankId: string,
    id: string,
  ): Promise<{ revision: number; observation: boolean } | null>;
  /**
   * Applies a curation in one transaction under the bank's lock, with the memory's row locked:
   * the state, and the content (rewriting its row, postings, entity links and vector) when the
   * memory is still at the revision it was prepared from. Invalidating or editing a memory
   * deletes the observations derived from it; the memory (when valid) and the other sources of
   * those observations are queued for consolidation again (`consolidation_redo`).
   */
  curateMemory(
    projectId: string,
    bankId: string,
    id: string,
    change: MemoryCuration,
  ): Promise<CurationOutcome>;
  /**
   * Deletes the observations consolidation derived from this memory and queues it, with the
   * other memories those observations came from, for consolidation again; null when there is
   * no such memory.
   */
  clearMemoryObservations(
    projectId: string,
    bankId: string,
    id: string,
  ): Promise<{ deleted: number; requeued: number } | null>;
  /** What curation did to a memory, oldest first. */
  curationEvents(projectId: string, bankId: string, id: string): Promise<CurationEvent[]>;
}

const ids = async (tx: Queryable, sql: string, params: unknown[]) =>
  (await tx.query<{ id: string }>(sql, params)).map((r) => r.id);

/**
 * Deletes the consolidated observations made from `memoryId` and marks for consolidation again
 * the other memories they came from and, when `again`, the memory itself. Runs inside the
 * caller's transaction, which holds the bank row lock.
 */
async function dropDerivedIn(
  tx: Queryable,
  projectId: string,
  bankId: string,
  memoryId: string,
  again: boolean,
): Promise<{ deleted: number; requeued: number }> {
  const p = [projectId, bankId];
  const observations = await ids(
    tx,
    `SELECT DISTINCT s.observation_id::text AS id FROM observation_sources s
     JOIN observations o ON o.project_id = s.project_id AND o.bank_id = s.bank_id AND o.id = s.observation_id
     WHERE s.project_id = $1 AND s.bank_id = $2 AND s.memory_id = $3`,
    [...p, memoryId],
  );
  const others = await ids(
    tx,
    `SELECT DISTINCT memory_id::text AS id FROM observation_sources
     WHERE project_id = $1 AND bank_id = $2 AND observation_id = ANY($3::uuid[])
       AND memory_id <> ALL($3::uuid[]) AND memory_id <> $4`,
    [...p, observations, memoryId],
  );
  const deleted = observations.length
    ? await deleteMemoriesIn(tx, projectId, bankId, { ids: observations })
    : 0;
  const redo = again ? [...others, memoryId] : others;
  if (redo.length) {
    await tx.query(
      `INSERT INTO consolidation_redo (project_id, bank_id, memory_id)
       SELECT $1, $2, r FROM unnest($3::uuid[]) AS r ON CONFLICT DO NOTHING`,
      [...p, redo],
    );
  }
  return { deleted, requeued: redo.length };
}

/**
 * Takes an invalidated memory out of the keyword index and its entities' mention counts, or puts
 * it back (`retire: false`), exactly: its postings move to `memories.retired_terms` and back
 * with the document frequencies they count in, and a vocabulary term no memory holds any longer
 * goes (a later forget of the memory must find none of its words left). Its entity links stay:
 * an edit or a restore needs them. Runs inside the caller's transaction, under the bank lock.
 */
async function retireIn(tx: Queryable, projectId: string, bankId: string, id: string, retire: boolean) {
  const p = [projectId, bankId, id];
  if (retire) {
    await tx.query(
      `UPDATE memories SET retired_terms = (SELECT coalesce(jsonb_object_agg(term, tf), '{}'::jsonb) FROM memory_terms
         WHERE project_id = $1 AND bank_id = $2 AND memory_id = $3)
       WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
      p,
    );
    await dropPostingsIn(tx, projectId, bankId, [id]);
  } else {
    await tx.query(
      `WITH back AS (SELECT r.key AS term, r.value::real AS tf, m.term_count AS dl
                     FROM memories m CROSS JOIN LATERAL jsonb_each_text(m.retired_terms) r
                     WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = $3),
       posted AS (INSERT INTO memory_terms (project_id, bank_id, memory_id, term, tf, dl)
                  SELECT $1, $2, $3, term, tf, dl FROM back)
       INSERT INTO bank_terms (project_id, bank_id, term, df)
       SELECT $1, $2, term, 1 FROM back ORDER BY term
       ON CONFLICT (project_id, bank_id, term) DO UPDATE SET df = bank_terms.df + 1`,
      p,
    );
    await tx.query(
      'UPDATE memories SET retired_terms = NULL WHERE project_id = $1 AND bank_id = $2 AND id = $3',
      p,
    );
  }
  await tx.query(
    `UPDATE entities e SET mention_count = greatest(e.mention_count + $4 * x.n, 0)
     FROM (SELECT entity_id, count(*)::int AS n FROM memory_entities
           WHERE project_id = $1 AND bank_id = $2 AND memory_id = $3 GROUP BY entity_id) x
     WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = x.entity_id`,
    [...p, retire ? -1 : 1],
  );
}

const CONSOLIDATED = `EXISTS (SELECT 1 FROM observations o
  WHERE o.project_id = m.project_id AND o.bank_id = m.bank_id AND o.id = m.id)`;

export function curationQueries(db: Db): CurationStore {
  return {
    async curationBase(projectId, bankId, id) {
      const rows = await db.query<{ revision: number; observation: boolean }>(
        `SELECT m.revision, ${CONSOLIDATED} AS observation FROM memories m
         WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = $3`,
        [projectId, bankId, id],
      );
      return rows[0] ?? null;
    },

    async curateMemory(projectId, bankId, id, change) {
      return db.transaction(async (tx): Promise<CurationOutcome> => {
        const p = [projectId, bankId, id];
        // The bank's lock first, as every writer of its memories takes it (and a content change
        // prepared for the other side of an encryption switch is refused); then the row's.
        if (change.content) await lockBankForWrite(tx, projectId, bankId, [change.content.memory]);
        else await lockBank(tx, projectId, bankId);
        const rows = await tx.query<{
          state: MemoryState;
          revision: number;
          term_count: number;
          observation: boolean;
        }>(
          `SELECT m.state, m.revision, m.term_count, ${CONSOLIDATED} AS observation FROM memories m
           WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = $3 FOR UPDATE`,
          p,
        );
        const row = rows[0];
        if (!row) return { done: false, reason: 'missing' };
        if (row.observation) return { done: false, reason: 'observation' };
        if (change.content && row.revision !== change.content.revision)
          return { done: false, reason: 'stale' };
        const events: { event: CurationEvent['event']; fields: string[] }[] = [];
        const state = change.state ?? row.state;
        if (state !== row.state)
          events.push({ event: state === 'invalidated' ? 'invalidated' : 'restored', fields: [] });
        await tx.query(
          `UPDATE memories SET state = $4, revision = revision + 1,
             invalidation_reason = CASE WHEN $4 = 'invalidated' THEN
               CASE WHEN $5::boolean THEN $6 ELSE invalidation_reason END END
           WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
          [...p, state, change.reason !== undefined, change.reason ?? null],
        );
        let derived = { deleted: 0, requeued: 0 };
        // An invalidated memory is out of the keyword index and its entities' counts: back in
        // first when it is restored or edited (an edit replaces what is indexed), out again at
        // the end when it stays invalidated.
        const indexed = row.state === 'valid' || state === 'valid' || change.content !== undefined;
        if (row.state === 'invalidated' && indexed) await retireIn(tx, projectId, bankId, id, false);
        if (change.content) {
          const m = change.content.memory;
          await unindexMemoriesIn(tx, projectId, bankId, [id]);
          const terms = termCountOf(m);
          await tx.query(
            `UPDATE memories SET type = $4, text = $5, context = $6, occurred_start = $7, occurred_end = $8,
               metadata = $9::jsonb, content_hash = $10, term_count = $11, embedding = $12::vector,
               embedding_sealed = $13, edited_at = clock_timestamp()
             WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
            [
              ...p,
              m.type,
              m.text,
              m.context,
              m.occurred_start,
              m.occurred_end,
              JSON.stringify(m.metadata),
              m.content_hash,
              terms,
              m.embedding_sealed || m.embedding.length === 0 ? null : vectorLiteral(m.embedding),
              m.embedding_sealed ?? null,
            ],
          );
          await indexMemoriesIn(tx, projectId, bankId, [m]);
          // Its vector changed: in-memory copies of the bank's vectors are stale.
          await tx.query(
            `UPDATE banks SET term_total = term_total + $3, vectors_version = vectors_version + 1, updated_at = now()
             WHERE project_id = $1 AND id = $2`,
            [projectId, bankId, terms - row.term_count],
          );
          events.push({ event: 'edited', fields: change.content.fields });
        }
        if (state === 'invalidated' && indexed) await retireIn(tx, projectId, bankId, id, true);
        // What was derived from what it said no longer stands: an edit or an invalidation takes
        // it back; a memory made valid again is consolidated (again).
        if (change.content || events.some((e) => e.event === 'invalidated'))
          derived = await dropDerivedIn(tx, projectId, bankId, id, state === 'valid');
        else if (events.some((e) => e.event === 'restored')) {
          await tx.query(
            `INSERT INTO consolidation_redo (project_id, bank_id, memory_id) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING`,
            p,
          );
          derived = { deleted: 0, requeued: 1 };
        }
        if (state !== row.state) {
          // Recall searches valid memories only; an encrypted bank's in-memory vectors reload.
          await tx.query(
            'UPDATE banks SET vectors_version = vectors_version + 1 WHERE project_id = $1 AND id = $2',
            [projectId, bankId],
          );
        }
        for (const [i, e] of events.entries()) {
          // One clock reading apart per event: the key holds the time.
          await tx.query(
            `INSERT INTO memory_curation (project_id, bank_id, memory_id, at, event, fields)
             VALUES ($1, $2, $3, clock_timestamp() + make_interval(secs => $6::float8 / 1000000), $4, $5::text[])`,
            [...p, e.event, e.fields, i],
          );
        }
        return { done: true, observationsDeleted: derived.deleted, requeued: derived.requeued };
      });
    },

    async clearMemoryObservations(projectId, bankId, id) {
      return db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        const rows = await tx.query<{ state: MemoryState; observation: boolean }>(
          `SELECT m.state, ${CONSOLIDATED} AS observation FROM memories m
           WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = $3 FOR UPDATE`,
          [projectId, bankId, id],
        );
        const row = rows[0];
        if (!row) return null;
        return dropDerivedIn(tx, projectId, bankId, id, row.state === 'valid' && !row.observation);
      });
    },

    async curationEvents(projectId, bankId, id) {
      return db.query<CurationEvent>(
        `SELECT at, event, fields FROM memory_curation
         WHERE project_id = $1 AND bank_id = $2 AND memory_id = $3 ORDER BY at`,
        [projectId, bankId, id],
      );
    },
  };
}
