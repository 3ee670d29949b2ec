/**
 * Database integrity check for stress tests: every counter mnemo keeps beside its rows must
 * equal what the rows say, and every link must point at a row that exists. Runs the same SQL on
 * both engines; returns one line per problem (empty when the database is consistent).
 */

/** Anything that runs a parameterised query and returns rows (a pg client, a store's Db). */
export interface SqlRunner {
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

interface Check {
  what: string;
  /** Returns the offending rows as `key` + `detail`. */
  sql: string;
}

const CHECKS: Check[] = [
  {
    what: 'banks.memory_count differs from the memories stored',
    sql: `SELECT b.project_id || '/' || b.id AS key, b.memory_count || ' != ' || count(m.id) AS detail
          FROM banks b LEFT JOIN memories m ON m.project_id = b.project_id AND m.bank_id = b.id
          GROUP BY b.project_id, b.id, b.memory_count HAVING b.memory_count <> count(m.id)`,
  },
  {
    what: 'banks.term_total differs from the sum of term counts',
    sql: `SELECT b.project_id || '/' || b.id AS key, b.term_total || ' != ' || coalesce(sum(m.term_count), 0) AS detail
          FROM banks b LEFT JOIN memories m ON m.project_id = b.project_id AND m.bank_id = b.id
          GROUP BY b.project_id, b.id, b.term_total HAVING b.term_total <> coalesce(sum(m.term_count), 0)`,
  },
  {
    what: 'banks.valid_count / entity_count / document_count differ from the rows stored',
    sql: `SELECT b.project_id || '/' || b.id AS key,
            b.valid_count || '/' || b.entity_count || '/' || b.document_count || ' != ' || x.valid || '/' || x.entities || '/' || x.docs AS detail
          FROM banks b CROSS JOIN LATERAL (SELECT
            (SELECT count(*) FROM memories m WHERE m.project_id = b.project_id AND m.bank_id = b.id AND m.state = 'valid') AS valid,
            (SELECT count(*) FROM entities e WHERE e.project_id = b.project_id AND e.bank_id = b.id) AS entities,
            (SELECT count(DISTINCT m.document_id) FROM memories m
              WHERE m.project_id = b.project_id AND m.bank_id = b.id AND m.document_id IS NOT NULL) AS docs) x
          WHERE (b.valid_count, b.entity_count, b.document_count) IS DISTINCT FROM (x.valid, x.entities, x.docs)`,
  },
  {
    what: 'bank_terms.df differs from the postings of the term',
    sql: `SELECT coalesce(bt.project_id, p.project_id) || '/' || coalesce(bt.bank_id, p.bank_id) || ':' || coalesce(bt.term, p.term) AS key,
            coalesce(bt.df, 0) || ' != ' || coalesce(p.n, 0) AS detail
          FROM bank_terms bt
          FULL JOIN (SELECT project_id, bank_id, term, count(*)::int AS n FROM memory_terms GROUP BY project_id, bank_id, term) p
            ON p.project_id = bt.project_id AND p.bank_id = bt.bank_id AND p.term = bt.term
          WHERE coalesce(bt.df, 0) <> coalesce(p.n, 0)`,
  },
  {
    what: 'memory_terms rows whose memory is gone',
    sql: `SELECT t.project_id || '/' || t.bank_id || ':' || t.memory_id AS key, t.term AS detail FROM memory_terms t
          WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.project_id = t.project_id AND m.bank_id = t.bank_id AND m.id = t.memory_id)`,
  },
  {
    what: 'memory_entities rows whose memory or entity is gone',
    sql: `SELECT me.project_id || '/' || me.bank_id || ':' || me.memory_id AS key, me.entity_id::text AS detail
          FROM memory_entities me
          WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.project_id = me.project_id AND m.bank_id = me.bank_id AND m.id = me.memory_id)
             OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.project_id = me.project_id AND e.bank_id = me.bank_id AND e.id = me.entity_id)`,
  },
  {
    // Invalidated memories keep their links (an edit or a restore needs them) but are not mentions.
    what: 'entities.mention_count differs from the valid memories linked to the entity',
    sql: `SELECT e.project_id || '/' || e.bank_id || ':' || e.name AS key, e.mention_count || ' != ' || count(m.id) AS detail
          FROM entities e LEFT JOIN memory_entities me
            ON me.project_id = e.project_id AND me.bank_id = e.bank_id AND me.entity_id = e.id
          LEFT JOIN memories m
            ON m.project_id = me.project_id AND m.bank_id = me.bank_id AND m.id = me.memory_id AND m.state = 'valid'
          GROUP BY e.project_id, e.bank_id, e.id, e.name, e.mention_count HAVING e.mention_count <> count(m.id)`,
  },
  {
    what: 'documents.memory_count differs from the memories of the document',
    sql: `SELECT d.project_id || '/' || d.bank_id || ':' || d.id AS key, d.memory_count || ' != ' || count(m.id) AS detail
          FROM documents d LEFT JOIN memories m
            ON m.project_id = d.project_id AND m.bank_id = d.bank_id AND m.document_id = d.id
          GROUP BY d.project_id, d.bank_id, d.id, d.memory_count HAVING d.memory_count <> count(m.id)`,
  },
  {
    what: 'memories of a document that has no documents row',
    sql: `SELECT m.project_id || '/' || m.bank_id || ':' || m.document_id AS key, count(*)::text AS detail FROM memories m
          WHERE m.document_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM documents d
            WHERE d.project_id = m.project_id AND d.bank_id = m.bank_id AND d.id = m.document_id)
          GROUP BY m.project_id, m.bank_id, m.document_id`,
  },
  {
    what: 'rows of a bank that does not exist',
    sql: `SELECT x.project_id || '/' || x.bank_id AS key, x.tbl AS detail FROM (
            SELECT project_id, bank_id, 'memories' AS tbl FROM memories
            UNION ALL SELECT project_id, bank_id, 'entities' FROM entities
            UNION ALL SELECT project_id, bank_id, 'bank_terms' FROM bank_terms
            UNION ALL SELECT project_id, bank_id, 'documents' FROM documents
            UNION ALL SELECT project_id, bank_id, 'operations' FROM operations) x
          WHERE NOT EXISTS (SELECT 1 FROM banks b WHERE b.project_id = x.project_id AND b.id = x.bank_id)
          GROUP BY x.project_id, x.bank_id, x.tbl`,
  },
  {
    what: 'operations in a state no worker would leave them in',
    sql: `SELECT project_id || '/' || bank_id || ':' || id AS key, status AS detail FROM operations
          WHERE status NOT IN ('pending', 'processing', 'completed', 'failed', 'cancelled')
             OR (status = 'processing' AND locked_until IS NULL)`,
  },
];

/** Runs every check; an empty list means the database is consistent. */
export async function integrityProblems(db: SqlRunner): Promise<string[]> {
  const problems: string[] = [];
  for (const check of CHECKS) {
    const rows = await db.query<{ key: string; detail: string }>(check.sql);
    for (const r of rows.slice(0, 20)) problems.push(`${check.what}: ${r.key} (${r.detail})`);
    if (rows.length > 20) problems.push(`${check.what}: ... and ${rows.length - 20} more`);
  }
  return problems;
}
