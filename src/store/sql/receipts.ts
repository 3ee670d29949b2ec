import type { Db, Queryable } from '../db.js';
import { SEALED } from '../sealed.js';
import { lockBank } from './bank-lock.js';
import { derivedObservations, redoConsolidation } from './derived.js';
import { deleteMemoriesIn } from './memories.js';
import { giveBackUnfinished, type Undone } from './operations.js';

/** What a forget is about: one memory, one document, or a whole bank. */
export type ForgetSubject =
  | { kind: 'memory'; id: string }
  | { kind: 'document'; id: string }
  | { kind: 'bank' };

/** A signed account of one forget, as stored: ids and counts, never content. */
export interface ReceiptRecord {
  id: string;
  at: Date;
  bank_id: string;
  subject_kind: ForgetSubject['kind'];
  subject_id: string | null;
  /** Rows removed (or erased), by table, plus `embeddings`: the vectors that went with their memories. */
  deleted: Record<string, number>;
  /** Which server key signed it (a fingerprint, not the key). */
  key_id: string;
  signature: string;
}

/** The receipt's identity, fixed before the forget, and how its counts are signed. */
export interface ReceiptDraft {
  id: string;
  at: Date;
  /** Signs the counts in the transaction of the forget: the receipt commits with it or not at all. */
  seal(deleted: Record<string, number>): { key_id: string; signature: string };
  /**
   * A bank's deletion: what each of its unfinished operations did not do of its work, given back
   * of the charge it holds in the deletion's transaction (see `giveBackUnfinished`).
   */
  undone?: Undone;
}

/** Forgetting (deleting a subject with everything derived from it) and its receipts. */
export interface ReceiptStore {
  /**
   * Deletes the subject and everything derived from it in one transaction, under the bank lock.
   * A memory or document: its memories, the observations they supported or contradicted, their
   * vectors, keyword terms and entity links, entities left without a mention, vocabulary left
   * unused, documents left empty, the (plaintext) evaluation runs whose cases name one of those
   * memories; it erases the kept Idempotency-Key answers that may contain them and the payloads
   * of finished Retain operations and the content (and its history) of mental models whose
   * Reflect drew on them (asking for their refresh), and queues the other memories behind a
   * deleted observation for consolidation again. A bank: every row of every table keyed by it but the audit log and
   * receipts, its data key included. The receipt `draft.seal` makes of the counts is stored in
   * the same transaction. Null, with nothing changed, when the subject does not exist.
   * `memoryIds`: every memory that went (for in-process caches); `reconsolidate`: how many
   * memories were marked for consolidation again.
   */
  forget(
    projectId: string,
    bankId: string,
    subject: ForgetSubject,
    draft: ReceiptDraft,
  ): Promise<{ receipt: ReceiptRecord; memoryIds: string[]; reconsolidate: number } | null>;
  getReceipt(projectId: string, id: string): Promise<ReceiptRecord | null>;
}

/** Tables keyed by bank that outlive a deleted bank: who did what (never content), and receipts. */
const KEPT_ON_BANK_DELETE = new Set(['audit', 'receipts']);

const RECEIPT_COLUMNS = 'id::text AS id, at, bank_id, subject_kind, subject_id, deleted, key_id, signature';

const UUID_PATTERN = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The `n` of `sql`'s one row (`SELECT count(*)::int AS n ...`). */
async function count(tx: Queryable, sql: string, params: unknown[]): Promise<number> {
  return (await tx.query<{ n: number }>(sql, params))[0]?.n ?? 0;
}

/** Runs a data-modifying statement (`sql`, with RETURNING 1) and counts its rows. */
const changed = (tx: Queryable, sql: string, params: unknown[]) =>
  count(tx, `WITH changed AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM changed`, params);

/** Adds `n` under `kind` when it is not zero: a receipt lists what went. */
function add(deleted: Record<string, number>, kind: string, n: number): void {
  if (n > 0) deleted[kind] = (deleted[kind] ?? 0) + n;
}

const ids = async (tx: Queryable, sql: string, params: unknown[]) =>
  (await tx.query<{ id: string }>(sql, params)).map((r) => r.id);

/**
 * The memories of a memory or document forget and the observations derived from them: their
 * rows with what hangs on them, counted, then deleted. Returns every memory id that went, or
 * null when the subject does not exist.
 */
async function forgetMemories(
  tx: Queryable,
  projectId: string,
  bankId: string,
  subject: Exclude<ForgetSubject, { kind: 'bank' }>,
  deleted: Record<string, number>,
): Promise<{ ids: string[]; redo: number } | null> {
  const p = [projectId, bankId];
  let own: string[];
  if (subject.kind === 'document') {
    const doc = await tx.query<{ kept: boolean }>(
      'DELETE FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING source IS NOT NULL AS kept',
      [...p, subject.id],
    );
    if (doc.length === 0) return null;
    add(deleted, 'documents', 1);
    // The text it was retained from, kept for reprocessing, goes with it.
    if (doc[0]!.kept) add(deleted, 'document_sources', 1);
    own = await ids(
      tx,
      'SELECT id::text AS id FROM memories WHERE project_id = $1 AND bank_id = $2 AND document_id = $3',
      [...p, subject.id],
    );
  } else {
    own = await ids(
      tx,
      'SELECT id::text AS id FROM memories WHERE project_id = $1 AND bank_id = $2 AND id = $3',
      [...p, subject.id],
    );
    if (own.length === 0) return null;
  }
  const { observations, redo } = await derivedObservations(tx, projectId, bankId, own);
  const all = [...own, ...observations];
  const entities = await ids(
    tx,
    `SELECT DISTINCT entity_id::text AS id FROM memory_entities
     WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])`,
    [...p, all],
  );
  const terms = (
    await tx.query<{ term: string }>(
      'SELECT DISTINCT term FROM memory_terms WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])',
      [...p, all],
    )
  ).map((r) => r.term);
  const documents = await ids(
    tx,
    `SELECT DISTINCT document_id AS id FROM memories
     WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[]) AND document_id IS NOT NULL`,
    [...p, all],
  );
  const counted = await tx.query<Record<string, number>>(
    `SELECT
       (SELECT count(*)::int FROM observations WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[])) AS observations,
       (SELECT count(*)::int FROM memories WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[])
          AND (embedding IS NOT NULL OR embedding_sealed IS NOT NULL)) AS embeddings,
       (SELECT count(*)::int FROM memory_terms WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])) AS memory_terms,
       (SELECT count(*)::int FROM memory_entities WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])) AS memory_entities,
       (SELECT count(*)::int FROM observation_sources WHERE project_id = $1 AND bank_id = $2
          AND (memory_id = ANY($3::uuid[]) OR observation_id = ANY($3::uuid[]))) AS observation_sources,
       (SELECT count(*)::int FROM consolidation_redo WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])) AS consolidation_redo,
       (SELECT count(*)::int FROM entity_keys k WHERE k.project_id = $1 AND k.bank_id = $2 AND k.entity_id = ANY($4::uuid[])
          AND NOT EXISTS (SELECT 1 FROM memory_entities me WHERE me.project_id = $1 AND me.bank_id = $2
            AND me.entity_id = k.entity_id AND me.memory_id <> ALL($3::uuid[]))) AS entity_keys`,
    [...p, all, entities],
  );
  for (const [kind, n] of Object.entries(counted[0] ?? {})) add(deleted, kind, n);
  add(deleted, 'memories', await deleteMemoriesIn(tx, projectId, bankId, { ids: all }));
  // What only these memories held: vocabulary no memory uses any more, entities no memory
  // mentions any more (their resolution keys go with them), documents left without a memory.
  add(
    deleted,
    'bank_terms',
    await changed(
      tx,
      'DELETE FROM bank_terms WHERE project_id = $1 AND bank_id = $2 AND term = ANY($3::text[]) AND df <= 0',
      [...p, terms],
    ),
  );
  add(
    deleted,
    'entities',
    await changed(
      tx,
      `DELETE FROM entities e WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = ANY($3::uuid[])
         AND NOT EXISTS (SELECT 1 FROM memory_entities me WHERE me.project_id = $1 AND me.bank_id = $2 AND me.entity_id = e.id)`,
      [...p, entities],
    ),
  );
  const emptied = await tx.query<{ kept: boolean }>(
    `DELETE FROM documents d WHERE d.project_id = $1 AND d.bank_id = $2 AND d.id = ANY($3::text[])
       AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2 AND m.document_id = d.id)
     RETURNING d.source IS NOT NULL AS kept`,
    [...p, documents],
  );
  add(deleted, 'documents', emptied.length);
  add(deleted, 'document_sources', emptied.filter((d) => d.kept).length);
  await redoConsolidation(tx, projectId, bankId, redo);
  return { ids: all, redo: redo.length };
}

/**
 * What else may hold the memories of a memory or document forget: kept answers of writes, the
 * payloads of finished Retains, evaluation runs. Erased or deleted, and counted.
 */
async function forgetCopies(
  tx: Queryable,
  projectId: string,
  bankId: string,
  values: string[],
  memoryIds: string[],
  receiptId: string,
  deleted: Record<string, number>,
): Promise<void> {
  const p = [projectId, bankId];
  // A kept answer that names what went (a sealed one cannot be read here, so every sealed
  // answer of the bank) keeps only a pointer to this receipt: a replay is refused, neither
  // answered with what was forgotten nor run again.
  add(
    deleted,
    'idempotency',
    await changed(
      tx,
      `UPDATE idempotency SET response = jsonb_build_object('forgotten', $4::text), withheld = true, encrypted = false
       WHERE project_id = $1 AND bank_id = $2 AND status > 0 AND NOT coalesce(response ? 'forgotten', false)
         AND (encrypted OR jsonb_path_exists(response, '$.** ? (@ == $v[*])', jsonb_build_object('v', to_jsonb($3::text[]))))`,
      [...p, values, receiptId],
    ),
  );
  // A finished Retain's payload is the text it was given; nothing reads it again.
  add(
    deleted,
    'operation_payloads',
    await changed(
      tx,
      `UPDATE operations SET payload = '{}'::jsonb
       WHERE project_id = $1 AND bank_id = $2 AND kind IN ('retain', 'import_documents')
         AND status IN ('completed', 'cancelled')
         AND payload <> '{}'::jsonb`,
      p,
    ),
  );
  // An export's archive may hold what went (a sealed one cannot be read here): every archive of
  // the bank goes; a new export is one call away.
  add(
    deleted,
    'transfer_archives',
    await changed(tx, 'DELETE FROM transfer_archives WHERE project_id = $1 AND bank_id = $2', p),
  );
  // Mental models whose last Reflect drew on a memory that went (its answer names it; a sealed
  // one cannot be read here, so every sealed one of the bank): content and answer are erased with
  // the history of what they were, and a refresh is asked for (re-derived from what is left).
  const models = await ids(
    tx,
    `UPDATE mental_models SET content = NULL, reflect_response = NULL, updated_at = now(),
       refresh_requested_at = coalesce(refresh_requested_at, date_trunc('milliseconds', now()))
     WHERE project_id = $1 AND bank_id = $2 AND (content IS NOT NULL OR reflect_response IS NOT NULL)
       AND (left(coalesce(reflect_response, ''), length($4)) = $4 OR left(coalesce(content, ''), length($4)) = $4
         OR EXISTS (SELECT 1 FROM regexp_matches(coalesce(reflect_response, ''), '${UUID_PATTERN}', 'g') AS x(m)
                    WHERE x.m[1]::uuid = ANY($3::uuid[])))
     RETURNING id`,
    [...p, memoryIds, SEALED],
  );
  add(deleted, 'mental_models', models.length);
  add(
    deleted,
    'mental_model_history',
    await changed(
      tx,
      'DELETE FROM mental_model_history WHERE project_id = $1 AND bank_id = $2 AND model_id = ANY($3::text[])',
      [...p, models],
    ),
  );
  // Evaluation runs whose cases name a memory that went (expected or found). A sealed run (an
  // encrypted bank's) cannot be read here: it keeps those ids, sealed.
  add(
    deleted,
    'evaluations',
    await changed(
      tx,
      `DELETE FROM evaluations e WHERE e.project_id = $1 AND e.bank_id = $2 AND left(e.cases, length($4)) <> $4
         AND EXISTS (SELECT 1 FROM regexp_matches(e.cases, '${UUID_PATTERN}', 'g') AS x(m) WHERE x.m[1]::uuid = ANY($3::uuid[]))`,
      [...p, memoryIds, SEALED],
    ),
  );
}

/** Every table keyed by bank (a `bank_id` column), those added by later migrations included. */
async function bankTables(tx: Queryable): Promise<string[]> {
  const rows = await tx.query<{ table_name: string }>(
    `SELECT c.table_name::text AS table_name FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND c.column_name = 'bank_id' AND t.table_type = 'BASE TABLE'
     ORDER BY c.table_name`,
  );
  return rows
    .map((r) => r.table_name)
    .filter((t) => !KEPT_ON_BANK_DELETE.has(t) && /^[a-z_][a-z0-9_]*$/.test(t));
}

/** A bank forget: every row keyed by the bank, counted by table, then deleted. */
async function forgetBank(
  tx: Queryable,
  projectId: string,
  bankId: string,
  deleted: Record<string, number>,
  undone: Undone | undefined,
): Promise<string[] | null> {
  const p = [projectId, bankId];
  const bank = await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE', p);
  if (bank.length === 0) return null;
  // Its queued operations go with it: what they hold of their charge and did not do goes back.
  if (undone) await giveBackUnfinished(tx, projectId, bankId, undone);
  const memoryIds = await ids(
    tx,
    'SELECT id::text AS id FROM memories WHERE project_id = $1 AND bank_id = $2',
    p,
  );
  add(
    deleted,
    'embeddings',
    await count(
      tx,
      `SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND bank_id = $2
         AND (embedding IS NOT NULL OR embedding_sealed IS NOT NULL)`,
      p,
    ),
  );
  add(
    deleted,
    'document_sources',
    await count(
      tx,
      'SELECT count(*)::int AS n FROM documents WHERE project_id = $1 AND bank_id = $2 AND source IS NOT NULL',
      p,
    ),
  );
  const tables = await bankTables(tx);
  for (const t of tables) {
    add(
      deleted,
      t,
      await count(tx, `SELECT count(*)::int AS n FROM "${t}" WHERE project_id = $1 AND bank_id = $2`, p),
    );
  }
  add(deleted, 'banks', 1);
  // Links first (faster than the cascade's row-by-row checks). The data key of an encrypted bank
  // goes before its rows: what is left of them anywhere cannot be opened without it. Then the
  // bank, whose foreign keys take the rest, and what is keyed by it without a foreign key.
  await tx.query('DELETE FROM memory_entities WHERE project_id = $1 AND bank_id = $2', p);
  await tx.query('DELETE FROM memory_terms WHERE project_id = $1 AND bank_id = $2', p);
  await tx.query('DELETE FROM bank_keys WHERE project_id = $1 AND bank_id = $2', p);
  await tx.query('DELETE FROM banks WHERE project_id = $1 AND id = $2', p);
  for (const t of tables) await tx.query(`DELETE FROM "${t}" WHERE project_id = $1 AND bank_id = $2`, p);
  return memoryIds;
}

/** Forgetting and receipts. */
export function receiptQueries(db: Db): ReceiptStore {
  return {
    async forget(projectId, bankId, subject, draft) {
      return db.transaction(async (tx) => {
        const deleted: Record<string, number> = {};
        let memoryIds: string[] | null;
        let reconsolidate = 0;
        if (subject.kind === 'bank')
          memoryIds = await forgetBank(tx, projectId, bankId, deleted, draft.undone);
        else {
          if ((await lockBank(tx, projectId, bankId)) === null) return null;
          const gone = await forgetMemories(tx, projectId, bankId, subject, deleted);
          if (gone === null) return null;
          memoryIds = gone.ids;
          reconsolidate = gone.redo;
          const values = subject.kind === 'document' ? [subject.id, ...memoryIds] : memoryIds;
          await forgetCopies(tx, projectId, bankId, values, memoryIds, draft.id, deleted);
        }
        if (memoryIds === null) return null;
        const { key_id, signature } = draft.seal(deleted);
        const rows = await tx.query<ReceiptRecord>(
          `INSERT INTO receipts (project_id, id, at, bank_id, subject_kind, subject_id, deleted, key_id, signature)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9) RETURNING ${RECEIPT_COLUMNS}`,
          [
            projectId,
            draft.id,
            draft.at.toISOString(),
            bankId,
            subject.kind,
            subject.kind === 'bank' ? null : subject.id,
            JSON.stringify(deleted),
            key_id,
            signature,
          ],
        );
        return { receipt: rows[0]!, memoryIds, reconsolidate };
      });
    },

    async getReceipt(projectId, id) {
      const rows = await db.query<ReceiptRecord>(
        `SELECT ${RECEIPT_COLUMNS} FROM receipts WHERE project_id = $1 AND id = $2`,
        [projectId, id],
      );
      return rows[0] ?? null;
    },
  };
}
