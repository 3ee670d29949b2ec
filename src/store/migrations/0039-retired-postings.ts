import type { Migration } from './migration.js';

export default {
  version: 39,
  name: 'an invalidated memory keeps its keyword postings beside its row, out of the index',
  sql: `
-- An invalidated memory is never recalled, so its postings must not take candidate slots of the
-- keyword channel nor count in document frequencies; they wait here ({term: tf}, in the form
-- the bank's terms are stored) until the memory is restored, then go back as they were (a
-- memory's postings carry its neighbours' terms too, which its text alone cannot rebuild).
-- NULL while the memory is valid.
ALTER TABLE memories ADD COLUMN retired_terms jsonb;

-- Memories invalidated before this version: their postings move out now, and they stop counting
-- as mentions of their entities (they keep their links, which a restore needs).
UPDATE memories m SET retired_terms = (
  SELECT coalesce(jsonb_object_agg(t.term, t.tf), '{}'::jsonb) FROM memory_terms t
  WHERE t.project_id = m.project_id AND t.bank_id = m.bank_id AND t.memory_id = m.id)
WHERE m.state = 'invalidated';

UPDATE bank_terms b SET df = b.df - x.n
FROM (SELECT t.project_id, t.bank_id, t.term, count(*)::int AS n FROM memory_terms t
      JOIN memories m ON m.project_id = t.project_id AND m.bank_id = t.bank_id AND m.id = t.memory_id
      WHERE m.state = 'invalidated' GROUP BY t.project_id, t.bank_id, t.term) x
WHERE b.project_id = x.project_id AND b.bank_id = x.bank_id AND b.term = x.term;

DELETE FROM memory_terms t USING memories m
WHERE m.project_id = t.project_id AND m.bank_id = t.bank_id AND m.id = t.memory_id AND m.state = 'invalidated';

DELETE FROM bank_terms WHERE df <= 0;

UPDATE entities e SET mention_count = greatest(e.mention_count - x.n, 0)
FROM (SELECT me.project_id, me.bank_id, me.entity_id, count(*)::int AS n FROM memory_entities me
      JOIN memories m ON m.project_id = me.project_id AND m.bank_id = me.bank_id AND m.id = me.memory_id
      WHERE m.state = 'invalidated' GROUP BY me.project_id, me.bank_id, me.entity_id) x
WHERE e.project_id = x.project_id AND e.bank_id = x.bank_id AND e.id = x.entity_id;
`,
} satisfies Migration;
