import type { Db } from '../db.js';
import { SEALED } from '../sealed.js';
import { lockTarget } from './encryption.js';
import { dropPostingsIn } from './memories.js';
import { MENTAL_MODEL_WRONG_FORM } from './mental-models.js';
import { partsOf, readPayloadParts, storedPayload, writePayloadParts } from './payload-parts.js';

/** A memory's stored fields as read for conversion between plain and encrypted form. */
export interface StoredMemoryFields {
  id: string;
  text: string;
  context: string | null;
  metadata: Record<string, unknown>;
  content_hash: string;
  terms: { term: string; tf: number }[];
  /** The plain vector as pgvector text (`[1,2,...]`), or null. */
  embedding: string | null;
  /** The sealed vector, or null. */
  embedding_sealed: string | null;
  /** The form of its text, terms and hashes (its vector may still be in the other form). */
  encrypted: boolean;
}

export interface ConvertedMemory {
  id: string;
  text: string;
  context: string | null;
  metadata: Record<string, unknown>;
  content_hash: string;
  terms: { term: string; tf: number }[];
  /** Plain vector as pgvector text; null in the encrypted form. */
  embedding: string | null;
  embedding_sealed: string | null;
  encrypted: boolean;
}

export interface ConvertedEntity {
  id: string;
  name: string;
  key: string;
  aliases: string[];
  encrypted: boolean;
}

/** The batches that move a bank's rows between plain and encrypted form. */
export interface ConversionStore {
  /**
   * Converts up to `limit` memories not yet in the wanted form (with their keyword terms) in one
   * transaction under the bank lock; 0 when none are left or the bank's config changed meanwhile.
   */
  convertMemories(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (rows: StoredMemoryFields[]) => ConvertedMemory[],
  ): Promise<number>;
  /** The same for entities; an entity whose new key exists already is merged into that one. */
  convertEntities(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (rows: { id: string; name: string; name_key: string; aliases: string[] }[]) => ConvertedEntity[],
  ): Promise<number>;
  /** The same for the payloads of the bank's operations (queued Retain items). */
  convertPayloads(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (payload: unknown) => unknown,
  ): Promise<number>;
  /** The same for the bank's directives (name and text), all in one transaction. */
  convertDirectives(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    convert: (d: { id: string; name: string; text: string }) => { name: string; text: string },
  ): Promise<number>;
  /**
   * The same for the bank's own free text (name, mission, config text): `convert` gets them as
   * stored and returns their new form; the config values it returns are merged into the config.
   */
  convertBankText(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    convert: (b: { name: string | null; mission: string | null; config: Record<string, unknown> }) => {
      name: string | null;
      mission: string | null;
      config: Record<string, unknown>;
    },
  ): Promise<void>;
  /**
   * The same for the content hashes and kept sources of the bank's documents (sealed in an
   * encrypted bank): `convert` gets each stored value with the field it is.
   */
  convertDocuments(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (stored: string, field: 'document' | 'source') => string,
  ): Promise<number>;
  /** Under the bank lock: if no row is left in the wrong form, ends the conversion (true). */
  finishConversion(projectId: string, bankId: string): Promise<boolean>;
}

/**
 * A memory not in the form `$3` (wants encryption) asks for: its text and hashes, or its vector
 * (an encrypted bank keeps only the sealed one, a plain bank only the plain one).
 */
const WRONG_FORM = `encrypted <> $3 OR (CASE WHEN $3 THEN embedding IS NOT NULL ELSE embedding_sealed IS NOT NULL END)`;

/**
 * A document whose content hash or kept source is not in the form `$T` (wants encryption) asks
 * for; `$S` is the sealed prefix. Placeholders, renumbered by each statement.
 */
const DOCUMENT_WRONG_FORM = `((content_hash <> '' AND starts_with(content_hash, $S) <> $T)
  OR (source IS NOT NULL AND starts_with(source, $S) <> $T))`;

/** Terms as `{term: tf}`; a term given twice keeps its highest frequency (as the index does). */
function termObject(terms: { term: string; tf: number }[]): Record<string, number> {
  const out: Record<string, number> = Object.create(null);
  for (const t of terms) out[t.term] = Math.max(out[t.term] ?? 0, t.tf);
  return out;
}

/**
 * The batches that move a bank's rows between plain and encrypted form, each under the bank lock
 * and only while the bank's config still wants that form (`lockTarget`).
 */
export function conversionQueries(db: Db): ConversionStore {
  return {
    async convertMemories(projectId, bankId, toEncrypted, limit, convert) {
      return db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return 0;
        const rows = await tx.query<{
          id: string;
          text: string;
          context: string | null;
          metadata: Record<string, unknown>;
          content_hash: string;
          term_count: number;
          embedding: string | null;
          embedding_sealed: string | null;
          encrypted: boolean;
          retired_terms: Record<string, number> | null;
        }>(
          `SELECT id::text AS id, text, context, metadata, content_hash, term_count,
             embedding::text AS embedding, embedding_sealed, encrypted, retired_terms FROM memories
           WHERE project_id = $1 AND bank_id = $2 AND (${WRONG_FORM}) ORDER BY seq LIMIT $4 FOR UPDATE`,
          [projectId, bankId, toEncrypted, limit],
        );
        if (rows.length === 0) return 0;
        const ids = rows.map((r) => r.id);
        const terms = await tx.query<{ memory_id: string; term: string; tf: number }>(
          `SELECT memory_id::text AS memory_id, term, tf FROM memory_terms
           WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])`,
          [projectId, bankId, ids],
        );
        const termsOf = new Map<string, { term: string; tf: number }[]>();
        for (const t of terms) {
          // Appended in place: a copy per posting is quadratic in a memory's terms.
          const list = termsOf.get(t.memory_id);
          if (list) list.push({ term: t.term, tf: t.tf });
          else termsOf.set(t.memory_id, [{ term: t.term, tf: t.tf }]);
        }
        // An invalidated memory's postings wait in its row, out of the index: converted with it
        // and kept there (`retired` below), never put in the index.
        const retired = new Set(rows.filter((r) => r.retired_terms !== null).map((r) => r.id));
        const converted: ConvertedMemory[] = convert(
          rows.map(({ retired_terms, ...r }) => ({
            ...r,
            terms: retired_terms
              ? Object.entries(retired_terms).map(([term, tf]) => ({ term, tf }))
              : (termsOf.get(r.id) ?? []),
          })),
        );
        const counts = converted.map((c) => ({
          ...c,
          term_count: Math.round(c.terms.reduce((a, t) => a + t.tf, 0)),
          retired_terms: retired.has(c.id) ? termObject(c.terms) : null,
        }));
        await tx.query(
          `UPDATE memories m SET text = r.text, context = r.context, metadata = r.metadata,
             content_hash = r.content_hash, term_count = r.term_count, encrypted = r.encrypted,
             embedding = r.embedding::vector, embedding_sealed = r.embedding_sealed, retired_terms = r.retired_terms
           FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, text text, context text, metadata jsonb,
             content_hash text, term_count int, encrypted boolean, embedding text, embedding_sealed text,
             retired_terms jsonb)
           WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = r.id`,
          [projectId, bankId, JSON.stringify(counts.map(({ terms: _t, ...c }) => c))],
        );
        // Move the keyword index: old terms out of the statistics (and, held by no memory any
        // longer, out of the vocabulary: no plain word stays in an encrypted bank), new terms in.
        await dropPostingsIn(tx, projectId, bankId, ids);
        const fresh = counts.flatMap((c) =>
          c.retired_terms ? [] : c.terms.map((t) => ({ m: c.id, t: t.term, f: t.tf, d: c.term_count })),
        );
        if (fresh.length) {
          const json = JSON.stringify(fresh);
          await tx.query(
            `INSERT INTO memory_terms (project_id, bank_id, memory_id, term, tf, dl)
             SELECT $1, $2, r.m, r.t, max(r.f), max(r.d) FROM jsonb_to_recordset($3::jsonb) AS r(m uuid, t text, f real, d real)
             GROUP BY r.m, r.t`,
            [projectId, bankId, json],
          );
          await tx.query(
            `INSERT INTO bank_terms (project_id, bank_id, term, df)
             SELECT $1, $2, x.t, count(*) FROM (SELECT DISTINCT r.m, r.t FROM jsonb_to_recordset($3::jsonb) AS r(m uuid, t text)) x
             GROUP BY x.t ORDER BY x.t
             ON CONFLICT (project_id, bank_id, term) DO UPDATE SET df = bank_terms.df + excluded.df`,
            [projectId, bankId, json],
          );
        }
        const delta =
          counts.reduce((n, c) => n + c.term_count, 0) - rows.reduce((n, r) => n + r.term_count, 0);
        if (delta !== 0) {
          await tx.query('UPDATE banks SET term_total = term_total + $3 WHERE project_id = $1 AND id = $2', [
            projectId,
            bankId,
            delta,
          ]);
        }
        return rows.length;
      });
    },

    async convertEntities(projectId, bankId, toEncrypted, limit, convert) {
      return db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return 0;
        const rows = await tx.query<{ id: string; name: string; name_key: string; aliases: string[] }>(
          `SELECT id::text AS id, name, name_key, aliases FROM entities
           WHERE project_id = $1 AND bank_id = $2 AND encrypted <> $3 ORDER BY id LIMIT $4 FOR UPDATE`,
          [projectId, bankId, toEncrypted, limit],
        );
        if (rows.length === 0) return 0;
        const converted: ConvertedEntity[] = convert(rows);
        // An entity of the new form with the same key may exist already (written after the
        // switch): the converted one is merged into it.
        const existing = await tx.query<{ id: string; name_key: string }>(
          `SELECT id::text AS id, name_key FROM entities WHERE project_id = $1 AND bank_id = $2
             AND name_key = ANY($3::text[]) AND NOT (id = ANY($4::uuid[]))`,
          [projectId, bankId, converted.map((c) => c.key), rows.map((r) => r.id)],
        );
        const into = new Map(existing.map((e) => [e.name_key, e.id]));
        const plain = converted.filter((c) => !into.has(c.key));
        if (plain.length) {
          await tx.query(
            `UPDATE entities e SET name = r.name, name_key = r.key, aliases = r.aliases, encrypted = r.encrypted
             FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, name text, key text, aliases text[], encrypted boolean)
             WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = r.id`,
            [projectId, bankId, JSON.stringify(plain)],
          );
        }
        for (const c of converted.filter((x) => into.has(x.key))) {
          const target = into.get(c.key)!;
          await tx.query(
            `INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
             SELECT project_id, bank_id, memory_id, $4::uuid FROM memory_entities
             WHERE project_id = $1 AND bank_id = $2 AND entity_id = $3::uuid ON CONFLICT DO NOTHING`,
            [projectId, bankId, c.id, target],
          );
          await tx.query(
            `UPDATE entities t SET mention_count = t.mention_count + o.mention_count,
               first_seen = least(t.first_seen, o.first_seen), last_seen = greatest(t.last_seen, o.last_seen),
               aliases = ARRAY(SELECT DISTINCT a FROM unnest(t.aliases || $5::text[]) AS a)
             FROM entities o
             WHERE t.project_id = $1 AND t.bank_id = $2 AND t.id = $4::uuid
               AND o.project_id = $1 AND o.bank_id = $2 AND o.id = $3::uuid`,
            [projectId, bankId, c.id, target, c.aliases],
          );
          await tx.query('DELETE FROM entities WHERE project_id = $1 AND bank_id = $2 AND id = $3::uuid', [
            projectId,
            bankId,
            c.id,
          ]);
        }
        return rows.length;
      });
    },

    async convertPayloads(projectId, bankId, toEncrypted, limit, convert) {
      return db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return 0;
        const rows = await tx.query<{ id: string; payload: unknown }>(
          `SELECT id::text AS id, payload FROM operations
           WHERE project_id = $1 AND bank_id = $2 AND (payload ? $3) <> $4 AND payload <> '{}'::jsonb
           ORDER BY created_at LIMIT $5 FOR UPDATE`,
          [projectId, bankId, '\u0001e1', toEncrypted, limit],
        );
        if (rows.length === 0) return 0;
        // A payload kept in parts is read whole, converted, and written back in parts (or whole,
        // when it now fits one: the trigger of migration 36 drops its old parts).
        const converted: { id: string; payload: unknown }[] = [];
        for (const r of rows) {
          const count = partsOf(r.payload);
          const text = count === null ? null : await readPayloadParts(tx, projectId, bankId, r.id, count);
          // Never the case (the parts go with their stub); converting the stub would lose it.
          if (count !== null && text === null) throw new Error(`operation ${r.id}: payload parts missing`);
          const { value, parts } = storedPayload(convert(text === null ? r.payload : JSON.parse(text)));
          if (parts.length) await writePayloadParts(tx, projectId, bankId, r.id, parts);
          converted.push({ id: r.id, payload: value });
        }
        await tx.query(
          `UPDATE operations o SET payload = r.payload FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, payload jsonb)
           WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = r.id`,
          [projectId, bankId, JSON.stringify(converted)],
        );
        return rows.length;
      });
    },

    async convertDirectives(projectId, bankId, toEncrypted, convert) {
      return db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return 0;
        // A directive's form shows in its text: sealed values carry the prefix, plain ones never do.
        const rows = await tx.query<{ id: string; name: string; text: string }>(
          `SELECT id::text AS id, name, text FROM directives
           WHERE project_id = $1 AND bank_id = $2 AND starts_with(text, $3) <> $4 FOR UPDATE`,
          [projectId, bankId, SEALED, toEncrypted],
        );
        if (rows.length === 0) return 0;
        await tx.query(
          `UPDATE directives d SET name = r.name, text = r.text
           FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, name text, text text)
           WHERE d.project_id = $1 AND d.bank_id = $2 AND d.id = r.id`,
          [projectId, bankId, JSON.stringify(rows.map((r) => ({ id: r.id, ...convert(r) })))],
        );
        return rows.length;
      });
    },

    async convertBankText(projectId, bankId, toEncrypted, convert) {
      await db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return;
        const rows = await tx.query<{
          name: string | null;
          mission: string | null;
          config: Record<string, unknown>;
        }>('SELECT name, mission, config FROM banks WHERE project_id = $1 AND id = $2', [projectId, bankId]);
        if (!rows[0]) return;
        const out = convert(rows[0]);
        // Only the converted values are merged: other settings are left as they are.
        await tx.query(
          `UPDATE banks SET name = $3, mission = $4, config = config || $5::jsonb
           WHERE project_id = $1 AND id = $2`,
          [projectId, bankId, out.name, out.mission, JSON.stringify(out.config)],
        );
      });
    },

    async convertDocuments(projectId, bankId, toEncrypted, limit, convert) {
      return db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return 0;
        const rows = await tx.query<{ id: string; content_hash: string; source: string | null }>(
          `SELECT id, content_hash, source FROM documents WHERE project_id = $1 AND bank_id = $2
             AND ${DOCUMENT_WRONG_FORM.replaceAll('$T', '$4').replaceAll('$S', '$3')}
           ORDER BY id LIMIT $5 FOR UPDATE`,
          [projectId, bankId, SEALED, toEncrypted, limit],
        );
        if (rows.length === 0) return 0;
        const value = (v: string, field: 'document' | 'source') =>
          v === '' || v.startsWith(SEALED) === toEncrypted ? v : convert(v, field);
        await tx.query(
          `UPDATE documents d SET content_hash = r.h, source = r.s
           FROM jsonb_to_recordset($3::jsonb) AS r(id text, h text, s text)
           WHERE d.project_id = $1 AND d.bank_id = $2 AND d.id = r.id`,
          [
            projectId,
            bankId,
            JSON.stringify(
              rows.map((r) => ({
                id: r.id,
                h: value(r.content_hash, 'document'),
                s: r.source === null ? null : value(r.source, 'source'),
              })),
            ),
          ],
        );
        return rows.length;
      });
    },

    async finishConversion(projectId, bankId) {
      return db.transaction(async (tx) => {
        const target = await lockTarget(tx, projectId, bankId);
        if (target === null) return true;
        const rows = await tx.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM memories WHERE project_id = $1 AND bank_id = $2 AND (${WRONG_FORM}))
                + (SELECT count(*) FROM entities WHERE project_id = $1 AND bank_id = $2 AND encrypted <> $3)
                + (SELECT count(*) FROM directives WHERE project_id = $1 AND bank_id = $2
                     AND starts_with(text, $4) <> $3)
                + (SELECT count(*) FROM documents WHERE project_id = $1 AND bank_id = $2
                     AND ${DOCUMENT_WRONG_FORM.replaceAll('$T', '$3').replaceAll('$S', '$4')})
                + (SELECT count(*) FROM evaluations WHERE project_id = $1 AND bank_id = $2
                     AND starts_with(cases, $4) <> $3)
                + ${MENTAL_MODEL_WRONG_FORM} AS n`,
          [projectId, bankId, target, SEALED],
        );
        if (Number(rows[0]!.n) > 0) return false;
        await tx.query('UPDATE bank_keys SET converting = false WHERE project_id = $1 AND bank_id = $2', [
          projectId,
          bankId,
        ]);
        return true;
      });
    },
  };
}
