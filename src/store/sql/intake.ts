import type { Entity } from '../../core/types.js';
import type { Db } from '../db.js';
import type { Store } from '../store.js';

type IntakeStore = Pick<Store, 'findEntities' | 'documentHashes' | 'addLlmUsage'>;

/** What Retain reads before it writes: entities to resolve against, document hashes; and usage counters. */
export function intakeQueries(db: Db): IntakeStore {
  return {
    findEntities(projectId, bankId, keys, words) {
      return db.query<Entity>(
        `SELECT id::text AS id, name, type, aliases, mention_count, first_seen, last_seen FROM entities
         WHERE project_id = $1 AND bank_id = $2
           AND (name_key = ANY($3::text[]) OR lower(aliases::text)::text[] && $3::text[]
             OR split_part(name_key, ' ', 1) = ANY($4::text[])
             OR regexp_replace(name_key, '^.* ', '') = ANY($4::text[]))
         ORDER BY mention_count DESC LIMIT 500`,
        [projectId, bankId, keys, words],
      );
    },
    async documentHashes(projectId, bankId, ids) {
      if (ids.length === 0) return new Map();
      const rows = await db.query<{ id: string; content_hash: string }>(
        'SELECT id, content_hash FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::text[])',
        [projectId, bankId, ids],
      );
      return new Map(rows.map((r) => [r.id, r.content_hash]));
    },
    async addLlmUsage(projectId, bankId, input, output) {
      await db.query(
        `UPDATE banks SET llm_input_tokens = llm_input_tokens + $3, llm_output_tokens = llm_output_tokens + $4
         WHERE project_id = $1 AND id = $2`,
        [projectId, bankId, input, output],
      );
    },
  };
}
