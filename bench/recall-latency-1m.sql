-- How the 1M bench bank of docs/recall.md ("A million memories in one bank") was made from the
-- 100k memories bench/recall-latency.ts loads (--sizes 1000000, stopped at 100,000): run the three
-- parts with psql against its database; the second and third can run at the same time
-- (bench/recall-latency-1m.sh build does all of it).
-- Part 1: ids, time shift and noise vectors of the nine copies.
DROP TABLE IF EXISTS rep_idmap, rep_noise, rep_shift;
CREATE TABLE rep_shift AS SELECT (max(mentioned_at) - min(mentioned_at)) * 100000 / 99999 AS span FROM memories WHERE bank_id = 'bench-1000000';
CREATE TABLE rep_noise AS SELECT k, (SELECT array_agg((random()::real - 0.5) * 0.06) FROM generate_series(1, 100) WHERE k >= 0)::vector AS v FROM generate_series(0, 999) k;
CREATE TABLE rep_idmap AS SELECT c, m.id AS old_id, gen_random_uuid() AS new_id, m.seq
  FROM memories m CROSS JOIN generate_series(1, 9) c WHERE m.bank_id = 'bench-1000000';
CREATE INDEX ON rep_idmap (old_id);
ANALYZE rep_idmap;
-- Part 2: the copied memories and the HNSW index.
SET session_replication_role = replica;
SET maintenance_work_mem = '2GB';
INSERT INTO memories (project_id, bank_id, id, type, text, context, occurred_start, occurred_end, mentioned_at,
  tags, metadata, document_id, chunk_id, content_hash, term_count, embedding, created_at, encrypted, embedding_sealed)
SELECT b.project_id, b.bank_id, i.new_id, b.type, b.text, b.context,
  b.occurred_start + i.c * s.span, b.occurred_end + i.c * s.span, b.mentioned_at + i.c * s.span,
  b.tags, jsonb_build_object('session', (b.metadata->>'session') || '-' || i.c), b.document_id, b.chunk_id,
  md5(i.new_id::text), b.term_count, b.embedding + n.v, b.created_at, b.encrypted, b.embedding_sealed
FROM rep_idmap i JOIN memories b ON b.project_id = 'default' AND b.bank_id = 'bench-1000000' AND b.id = i.old_id
CROSS JOIN rep_shift s JOIN rep_noise n ON n.k = (i.seq * 7 + i.c * 131) % 1000
ORDER BY i.c, i.seq;
UPDATE banks SET memory_count = (SELECT count(*) FROM memories WHERE bank_id = 'bench-1000000'),
  term_total = (SELECT sum(term_count) FROM memories WHERE bank_id = 'bench-1000000')
WHERE project_id = 'default' AND id = 'bench-1000000';
SELECT memory_count FROM banks;
CREATE INDEX IF NOT EXISTS memories_hnsw_100 ON memories USING hnsw ((embedding::vector(100)) vector_cosine_ops) WHERE vector_dims(embedding) = 100;
VACUUM ANALYZE memories;
-- Part 3: the copied postings, their indexes rebuilt after the load; document frequencies x10.
SET session_replication_role = replica;
SET maintenance_work_mem = '2GB';
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
DROP INDEX memory_terms_impact;
DROP INDEX memory_terms_memory;
INSERT INTO memory_terms (project_id, bank_id, term, memory_id, tf, dl)
SELECT t.project_id, t.bank_id, t.term, i.new_id, t.tf, t.dl
FROM memory_terms t JOIN rep_idmap i ON i.old_id = t.memory_id
WHERE t.project_id = 'default' AND t.bank_id = 'bench-1000000';
UPDATE bank_terms SET df = df * 10 WHERE project_id = 'default' AND bank_id = 'bench-1000000';
ALTER TABLE memory_terms ADD CONSTRAINT memory_terms_pkey PRIMARY KEY (project_id, bank_id, term, memory_id) INCLUDE (tf, dl);
CREATE INDEX memory_terms_impact ON memory_terms (project_id, bank_id, term, tf DESC, dl, memory_id);
VACUUM ANALYZE memory_terms;
CREATE INDEX memory_terms_memory ON memory_terms (project_id, bank_id, memory_id);
VACUUM ANALYZE bank_terms;
