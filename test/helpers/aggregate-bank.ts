/**
 * A bank for whole-bank aggregates (issue 18), seeded in an existing bank row: `n` memories of
 * three types with 1 to 4 tags each (some in any case, some not ASCII), some invalidated, some
 * with a `mentioned_at`; an observation of every 20th with 3 sources; consolidation halfway; `n`
 * documents; 61 entities, the first a hub every memory mentions with two others. Used by
 * test/security/aggregates.slow.test.ts and `npm run bench -- aggregates`.
 */
import type { Db } from '../../src/store/db.js';

export async function seedAggregateBank(db: Db, p: string, bank: string, n: number): Promise<void> {
  await db.exec(`
    INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, state, tags, created_at, mentioned_at)
      SELECT '${p}', '${bank}', md5('m' || i)::uuid,
             CASE WHEN i % 4 = 0 THEN 'experience' WHEN i % 10 = 1 THEN 'observation' ELSE 'world' END,
             'memory ' || i, md5(i::text), CASE WHEN i % 23 = 0 THEN 'invalidated' ELSE 'valid' END,
             CASE WHEN i % 5 = 0 THEN ARRAY['Apple', 'tag-' || (i % 40)]
                  WHEN i % 5 = 1 THEN ARRAY['tag-' || (i % 40), 'apple', 'é' || (i % 3), '文']
                  ELSE ARRAY['tag-' || (i % 7)] END,
             now() - (i % 150) * interval '1 hour' - (i % 7) * interval '1 minute',
             CASE WHEN i % 3 = 0 THEN now() - (i % 9) * interval '1 day' END
        FROM generate_series(1, ${n}) i;
    INSERT INTO observations (project_id, bank_id, id, writer)
      SELECT '${p}', '${bank}', md5('m' || i)::uuid, 'consolidation' FROM generate_series(1, ${n}) i WHERE i % 20 = 1;
    INSERT INTO observation_sources (project_id, bank_id, observation_id, memory_id, relation)
      SELECT '${p}', '${bank}', md5('m' || i)::uuid, md5('m' || (i + j))::uuid,
             CASE WHEN j = 3 THEN 'contradicts' ELSE 'supports' END
        FROM generate_series(1, ${n} - 10) i, generate_series(1, 3) j WHERE i % 20 = 1;
    INSERT INTO consolidation_state (project_id, bank_id, last_seq)
      SELECT '${p}', '${bank}', (SELECT min(seq) + ${Math.floor(n / 2)} FROM memories WHERE bank_id = '${bank}');
    INSERT INTO documents (project_id, bank_id, id, content_hash)
      SELECT '${p}', '${bank}', 'd-' || i, md5(i::text) FROM generate_series(1, ${n}) i;
    ALTER TABLE entities DISABLE TRIGGER entities_keys_inserted;
    INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count)
      SELECT '${p}', '${bank}', md5('e' || i)::uuid, 'E' || i, 'e' || i, 'person', 1 FROM generate_series(0, 60) i;
    ALTER TABLE entities ENABLE TRIGGER entities_keys_inserted;
    -- Entity 0 is a hub: every memory mentions it, and two others of 60.
    INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
      SELECT DISTINCT '${p}', '${bank}', md5('m' || i)::uuid, md5('e' || e)::uuid
        FROM generate_series(1, ${n}) i, LATERAL (VALUES (0), (1 + i % 50), (51 + i % 10)) x(e);
    ANALYZE;
  `);
}
