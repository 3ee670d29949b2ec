/**
 * The keyword channel's SQL function `mnemo_keyword_search`, defined by migration 6 and
 * replaced by 8, 12 and 13. What every version shares is written once here; each migration
 * states only its own part. The text these build must stay byte for byte what each migration
 * applied (test/store/migrations.test.ts pins every migration's checksum), so a change to the
 * function is a new migration with its own body, never an edit here.
 */

/** The function's name, arguments and result, from `FUNCTION` to the line before its language. */
const SIGNATURE = `FUNCTION mnemo_keyword_search(
  p_project text, p_bank text, p_terms text[], p_limit int, p_candidates int, p_driver_postings int,
  p_k1 float8, p_b float8,
  p_types text[], p_tags text[], p_tags_match text, p_document text, p_before timestamptz)
RETURNS TABLE (memory_id uuid, score float8)
`;

/**
 * The CTEs every version starts with: bank statistics, the query terms the bank knows with their
 * IDF, and the rarest terms within the driver budget (`driverColumns` of each, from `x`).
 */
const statsCtes = (driverColumns: string) => `  WITH stats AS MATERIALIZED (
    SELECT greatest(b.memory_count, 1)::float8 AS n,
           greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
    FROM banks b WHERE b.project_id = p_project AND b.id = p_bank),
  q AS MATERIALIZED (
    SELECT bt.term, bt.df, ln(1 + (stats.n - bt.df + 0.5) / (bt.df + 0.5)) AS idf
    FROM bank_terms bt CROSS JOIN stats
    WHERE bt.project_id = p_project AND bt.bank_id = p_bank AND bt.term = ANY(p_terms) AND bt.df > 0),
  drivers AS MATERIALIZED (
    SELECT ${driverColumns} FROM (
      SELECT q.term, q.idf, sum(q.df) OVER w AS running, row_number() OVER w AS rank
      FROM q WINDOW w AS (ORDER BY q.df, q.term)) x
    WHERE x.rank = 1 OR x.running <= p_driver_postings),
`;

/** Signature, filter flag and the CTEs every version starts with (`settings`: the function's SET clauses, from migration 53). */
const head = (
  driverColumns: string,
  settings: string,
) => `${SIGNATURE}LANGUAGE plpgsql STABLE${settings} AS $fn$
#variable_conflict use_column
DECLARE
  filtered boolean := p_types IS NOT NULL OR p_tags IS NOT NULL OR p_document IS NOT NULL OR p_before IS NOT NULL;
BEGIN
  RETURN QUERY
${statsCtes(driverColumns)}`;

/** The end of every version's query: the scored candidates, best first (`tieBreak` orders equal scores). */
export const finalSelect = (
  tieBreak: string,
) => `  SELECT s.id, least(1, s.bm25 / (SELECT sum(q.idf) FROM q))::float8
  FROM scored s ORDER BY s.bm25 DESC, ${tieBreak} DESC LIMIT p_limit`;

/**
 * The whole function: `ctes` are the version's own CTEs after `drivers` (ending with `scored`,
 * one line each, the last closed with `)` and a newline); `tieBreak` orders equal scores;
 * `driverColumns`: what `drivers` keeps of each (term and IDF, and from migration 42 its rank);
 * `settings`: SET clauses after its language (from migration 53, `GENERIC_PLAN`).
 */
export function keywordSearchFunction(opts: {
  create: 'CREATE' | 'CREATE OR REPLACE';
  ctes: string;
  tieBreak: 's.seq' | 's.id';
  driverColumns?: string;
  settings?: string;
}): string {
  return `${opts.create} ${head(opts.driverColumns ?? 'x.term, x.idf', opts.settings ?? '')}${opts.ctes}${finalSelect(opts.tieBreak)};
END
$fn$;
`;
}

/**
 * From migration 53 on: the function's query is planned once per session and that plan reused
 * (PL/pgSQL otherwise plans it afresh on every call, its parameters known: ~1 ms of a ~4 ms call
 * at a 10k bank, for the same plan; the choices that matter depend on the CTEs' values, which
 * no plan knows).
 */
export const GENERIC_PLAN = '\n  SET plan_cache_mode = force_generic_plan';

/**
 * The memory filters (mirroring store/sql/filters.ts) as the body of an EXISTS on posting `t`:
 * its first line unindented (the caller indents it by `indent` spaces), the others indented from
 * there; ends with the CASE's `END)`.
 */
export function memoryFilter(indent: number): string {
  const i = ' '.repeat(indent + 2);
  const w = ' '.repeat(indent + 4);
  return `SELECT 1 FROM memories m WHERE m.project_id = p_project AND m.bank_id = p_bank AND m.id = t.memory_id
${i}AND (p_types IS NULL OR m.type = ANY(p_types))
${i}AND (p_document IS NULL OR m.document_id = p_document)
${i}AND (p_before IS NULL OR m.mentioned_at <= p_before)
${i}AND (p_tags IS NULL OR CASE p_tags_match
${w}WHEN 'all' THEN m.tags = '{}' OR m.tags @> p_tags
${w}WHEN 'any_strict' THEN m.tags && p_tags
${w}WHEN 'all_strict' THEN m.tags @> p_tags
${w}WHEN 'exact' THEN m.tags @> p_tags AND m.tags <@ p_tags
${w}ELSE m.tags = '{}' OR m.tags && p_tags END)`;
}

/** A posting's BM25 term-frequency part (saturated tf with length normalisation), from its `dl` (the bank average when unset). */
export const BM25_TF =
  't.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl))';

/**
 * From migration 12 on: whether every query term is past the driver budget, and the terms phase 1
 * reads (`alsoFull`: a further condition on reading the drivers in full).
 */
export const readersCtes = (
  alsoFull = '',
) => `  capped AS MATERIALIZED (SELECT coalesce(min(q.df), 0) > p_driver_postings AS yes FROM q),
  -- The terms whose postings phase 1 reads, and how many of each (NULL: all).
  readers AS MATERIALIZED (
    SELECT d.term, d.idf, NULL::bigint AS n FROM drivers d WHERE NOT (SELECT yes FROM capped)${alsoFull}
    UNION ALL
    SELECT q.term, q.idf, greatest(p_driver_postings / (SELECT count(*) FROM q), 1) FROM q WHERE (SELECT yes FROM capped)),
`;

/**
 * From migration 12 on: phase 1's candidates, each reader's postings summed per memory (`filtered`:
 * the filter flag; `length`, from migration 54: each candidate's length `dl` too).
 */
export const summedCandidates = (filtered: string, length = false) => `SELECT t.memory_id AS id,
      sum(r.idf * ${BM25_TF}) AS s1${length ? ', max(t.dl) AS dl' : ''}
    FROM readers r
    CROSS JOIN LATERAL (
      SELECT t.memory_id, t.tf, t.dl FROM memory_terms t
      WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
        AND (NOT ${filtered} OR EXISTS (
          ${memoryFilter(10)}))
      ORDER BY t.tf DESC, t.dl, t.memory_id LIMIT r.n) t
    CROSS JOIN stats
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates`;

/** Phase 2's terms: those whose postings phase 1 did not read in full (every term when all are past the budget). */
const REST = `  rest AS MATERIALIZED (
    SELECT q.term, q.idf FROM q WHERE (SELECT yes FROM capped) OR q.term NOT IN (SELECT d.term FROM drivers d)),
`;

/** Phase 2's end: each candidate's whole score, from its phase 1 part and `extra`'s. */
const SCORED = `  scored AS MATERIALIZED (
    SELECT c.id, CASE WHEN (SELECT yes FROM capped) THEN 0 ELSE c.s1 END + coalesce(e.s2, 0) AS bm25
    FROM cand c LEFT JOIN extra e ON e.id = c.id)
`;

/** From migration 13 on: phase 2, the other terms looked up for the candidates, and their scores. */
export const PHASE_TWO = `  -- Terms whose every posting phase 1 read have their part of each candidate's score in s1
  -- already; only the others are looked up, all candidates of a term in one index scan.
${REST}  extra AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(r.idf * ${BM25_TF}) AS s2
    FROM rest r
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
      AND t.memory_id = ANY (ARRAY(SELECT c.id FROM cand c))
    CROSS JOIN stats
    GROUP BY t.memory_id),
${SCORED}`;

/**
 * From migration 52 on: phase 2 as one probe of the primary key per candidate and term (LIMIT 1
 * keeps it a nested loop of probes whatever the planner estimates), each candidate's terms
 * summed in `rest`'s order.
 */
export const PHASE_TWO_PROBES = `  -- Terms whose every posting phase 1 read have their part of each candidate's score in s1
  -- already; only the others are looked up: per candidate, one probe of the key per term.
${REST}  extra AS MATERIALIZED (
    SELECT c.id, e.s2 FROM cand c CROSS JOIN LATERAL (
      SELECT sum(r.idf * ${BM25_TF}) AS s2
      FROM rest r CROSS JOIN stats
      CROSS JOIN LATERAL (
        SELECT t.tf, t.dl FROM memory_terms t
        WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term AND t.memory_id = c.id
        LIMIT 1) t) e),
${SCORED}`;

/**
 * From migration 54 on: phase 2 reads a candidate in one index scan of its own postings
 * (memory_terms_memory), joined with `rest`, when that is the cheaper: its length (`dl`) at most
 * 6 per word to score less 10 (measured: ~2.4 µs a probe, ~4 µs a scan and ~0.4 µs a posting),
 * and never past `longest`; else (or of unknown length) it probes the key per word as migration
 * 52's. Both sum in `rest`'s order (`k`), so a score is the same float whichever way it was read.
 */
export const phaseTwoBounded = (
  longest: number,
) => `  -- Terms whose every posting phase 1 read have their part of each candidate's score in s1
  -- already; only the others are looked up. A short candidate's postings are read whole in one
  -- index scan (OFFSET 0 keeps it one scan: no join condition is pushed into it to make it a
  -- probe per word); a long one's, of which the words need few, by one probe of the key per word.
  rest AS MATERIALIZED (
    SELECT q.term, q.idf, row_number() OVER () AS k FROM q WHERE (SELECT yes FROM capped) OR q.term NOT IN (SELECT d.term FROM drivers d)),
  extra AS MATERIALIZED (
    SELECT c.id, CASE WHEN c.dl <= least(${longest}, 6 * (SELECT count(*) FROM rest) - 10) THEN (
      SELECT sum(r.idf * ${BM25_TF} ORDER BY r.k)
      FROM (SELECT t.term, t.tf, t.dl FROM memory_terms t
        WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.memory_id = c.id OFFSET 0) t
      JOIN rest r ON r.term = t.term CROSS JOIN stats)
    ELSE (
      SELECT sum(r.idf * ${BM25_TF} ORDER BY r.k)
      FROM rest r CROSS JOIN stats
      CROSS JOIN LATERAL (
        SELECT t.tf, t.dl FROM memory_terms t
        WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term AND t.memory_id = c.id
        LIMIT 1) t) END AS s2
    FROM cand c),
${SCORED}`;

/** Every posting of pair driver `term` (a column of CTE `pair`) passing the filter, scored with its IDF `idf`: (id, s), and with `length` its dl. */
const pairPosting = (
  term: string,
  idf: string,
  length: boolean,
) => `SELECT t.memory_id AS id, p.${idf} * ${BM25_TF} AS s${length ? ', t.dl' : ''}
      FROM pair p CROSS JOIN stats JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = p.${term}
      WHERE p.yes AND (NOT filtered OR EXISTS (
        ${memoryFilter(8)}))`;

/**
 * From migration 42 on: phase 1, one or two drivers read in full joined on the memory (else
 * summed per memory), up to `cand`; with `driverColumns` 'x.term, x.idf, x.rank'. `length`
 * (from migration 54): `cand` also has each candidate's length `dl`, from its postings.
 */
const pairPhaseOne = (
  length: boolean,
) => `  -- One or two drivers read in full: phase 1 is a full join of their posting lists.
  pair AS MATERIALIZED (
    SELECT NOT (SELECT coalesce(min(q.df), 0) > p_driver_postings FROM q) AND count(*) <= 2 AS yes,
      max(d.term) FILTER (WHERE d.rank = 1) AS t1, max(d.idf) FILTER (WHERE d.rank = 1) AS i1,
      max(d.term) FILTER (WHERE d.rank = 2) AS t2, max(d.idf) FILTER (WHERE d.rank = 2) AS i2
    FROM drivers d),
${readersCtes(' AND NOT (SELECT yes FROM pair)')}  cand AS MATERIALIZED ((
    SELECT coalesce(a.id, b.id) AS id, coalesce(a.s, 0) + coalesce(b.s, 0) AS s1${length ? ', coalesce(a.dl, b.dl) AS dl' : ''}
    FROM (${pairPosting('t1', 'i1', length)}) a
    FULL JOIN (${pairPosting('t2', 'i2', length)}) b ON b.id = a.id
    ORDER BY s1 DESC, id LIMIT p_candidates)
    UNION ALL (
    ${summedCandidates('filtered', length)})),
`;

/** Migration 42's phase 1 (see `pairPhaseOne`). */
export const PAIR_PHASE_ONE = pairPhaseOne(false);

/** From migration 54 on: migration 42's phase 1, each candidate with its length `dl`. */
export const PAIR_PHASE_ONE_LENGTHS = pairPhaseOne(true);
