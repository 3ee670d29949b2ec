import type { Entity } from '../records.js';
import type { Db } from '../db.js';
import { breathe } from '../breathe.js';

/** What Retain reads before it writes, and the bank's language model usage counters. */
export interface IntakeStore {
  /**
   * Entities for resolution, by index lookups: named or aliased one of `keys`, named one of
   * `words`, and, for each word, up to two longer names whose first or last word it is.
   */
  findEntities(projectId: string, bankId: string, keys: string[], words: string[]): Promise<Entity[]>;
  /** Content hashes of documents, by id. */
  documentHashes(projectId: string, bankId: string, ids: string[]): Promise<Map<string, string>>;
  /** The latest memories (without document) of a conversation, by session metadata; newest first. */
  latestInSession(
    projectId: string,
    bankId: string,
    session: string,
    limit: number,
  ): Promise<{ text: string; context: string | null }[]>;
}

/**
 * Longer names looked up per word: two tell "Bob" is ambiguous (both "Bob Smith" and "Bob
 * Jones" known), and a hub word (a common first name) cannot make the lookup read thousands.
 */
const WORD_MATCHES = 2;

/** Names (and, apart, words) one resolution lookup takes: each is a few index probes. */
export const LOOKUPS_PER_STATEMENT = 50;

/**
 * The conversation a memory belongs to when it has no document: the first of these metadata
 * keys present. Must stay the same expression as the `memories_session` index (migration 6)
 * and as `SESSION_KEYS` in `core/recall/context-terms.ts`.
 */
const SESSION_EXPR = `coalesce(m.metadata->>'session_id', m.metadata->>'session', m.metadata->>'conversation_id', m.metadata->>'thread_id')`;

/**
 * What Retain reads before it writes: entities to resolve against, document hashes, the latest
 * memories of a conversation (context indexing); and usage counters.
 */
export function intakeQueries(db: Db): IntakeStore {
  return {
    async findEntities(projectId, bankId, keys, words) {
      // Index lookups only (entity_keys, migration 16): exact names, aliases, and per word at
      // most WORD_MATCHES longer names starting or ending with it. Never a scan of the bank's
      // entities, never one query per name; at most LOOKUPS_PER_STATEMENT names and words a
      // statement (200 names and their words in one took up to 71 ms of the embedded engine).
      const found = new Map<string, Entity & { name_key: string }>();
      const allWords = [...new Set(words)];
      for (let i = 0; i < Math.max(keys.length, allWords.length); i += LOOKUPS_PER_STATEMENT) {
        if (i > 0) await breathe();
        for (const e of await findEntitiesPart(
          db,
          projectId,
          bankId,
          keys.slice(i, i + LOOKUPS_PER_STATEMENT),
          allWords.slice(i, i + LOOKUPS_PER_STATEMENT),
        ))
          found.set(e.id, e);
      }
      return [...found.values()]
        .sort(
          (a, b) =>
            b.mention_count - a.mention_count ||
            (a.name_key < b.name_key ? -1 : a.name_key > b.name_key ? 1 : 0),
        )
        .map(({ name_key: _, ...e }) => e);
    },
    async documentHashes(projectId, bankId, ids) {
      if (ids.length === 0) return new Map();
      const rows = await db.query<{ id: string; content_hash: string }>(
        'SELECT id, content_hash FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::text[])',
        [projectId, bankId, ids],
      );
      return new Map(rows.map((r) => [r.id, r.content_hash]));
    },
    latestInSession(projectId, bankId, session, limit) {
      return db.query<{ text: string; context: string | null }>(
        `SELECT m.text, m.context FROM memories m
         WHERE m.project_id = $1 AND m.bank_id = $2 AND m.document_id IS NULL AND ${SESSION_EXPR} = $3
         ORDER BY m.seq DESC LIMIT $4`,
        [projectId, bankId, session, limit],
      );
    },
  };
}

/** One bounded part of `findEntities`, unordered; with each entity's name key to order by. */
function findEntitiesPart(db: Db, projectId: string, bankId: string, keys: string[], words: string[]) {
  return db.query<Entity & { name_key: string }>(
    `WITH found AS (
           SELECT e.id FROM entities e
           WHERE e.project_id = $1 AND e.bank_id = $2 AND e.name_key = ANY($3::text[])
           UNION
           SELECT k.entity_id FROM entity_keys k
           WHERE k.project_id = $1 AND k.bank_id = $2 AND k.key = ANY($4::text[])
           UNION
           SELECT x.id FROM unnest($5::text[]) AS w(key)
           CROSS JOIN LATERAL (
             SELECT e.id FROM entity_keys k
             JOIN entities e ON e.project_id = k.project_id AND e.bank_id = k.bank_id AND e.id = k.entity_id
             WHERE k.project_id = $1 AND k.bank_id = $2 AND k.key = w.key AND strpos(e.name_key, ' ') > 0
             LIMIT ${WORD_MATCHES}) x)
         SELECT e.id::text AS id, e.name, e.type, e.aliases, e.mention_count, e.first_seen, e.last_seen, e.name_key
         FROM found f JOIN entities e ON e.project_id = $1 AND e.bank_id = $2 AND e.id = f.id`,
    [
      projectId,
      bankId,
      [...new Set([...keys, ...words])],
      keys.map((k) => `a:${k}`),
      words.map((w) => `w:${w}`),
    ],
  );
}
