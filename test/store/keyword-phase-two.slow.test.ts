/**
 * The keyword function's second phase, which scores the candidates by the query's other words
 * (those phase 1 did not read in full), reads what the candidates need, not the posting lists of
 * those words: at most one posting per candidate and word. Before migration 52 the planner read
 * every posting of each such word and tested each against the candidates (2,480 postings here
 * for 200 at most; at a 10k bank with a 12-word question, most of a Recall's database CPU).
 * From migration 54 a short candidate's postings are read whole, one index scan instead of a
 * probe per word; a long one's (over the length bound) still by probes, never whole.
 * On PostgreSQL the plan of the function's statement is read through `auto_explain`; on both
 * engines the hits equal the two-phase BM25 computed from the texts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewMemory } from '../../src/core/types.js';
import type { MemoryFilter } from '../../src/store/records.js';
import type pg from 'pg';
import type { Store } from '../../src/store/store.js';
import { ENGINES, oneConnectionPostgres, openTestStore } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { assertSameHits, CANDIDATES, twoPhaseBm25 } from '../helpers/two-phase-bm25.js';

const P = 'default';
const BANK = 'phase-two';
const SIZE = 1600;

/**
 * 'rare' in 100 memories and 'basil' in 800 drive phase 1 (900 postings, within the budget);
 * 'cedar' (1,200), 'amber' (1,280), 'fern' (1,200) and 'sage' (1,333) are past it, so phase 2
 * looks them up; 'dill' (every 40th) is a third driver for the summed form of phase 1. At most
 * 12 terms long: with 4 words to score, short enough for phase 2 to read whole (migration 54).
 */
function mem(i: number): NewMemory {
  const words: string[] = [];
  const tf = i % 3 === 1 ? 2 : 1;
  if (i % 16 === 0) words.push('rare');
  if (i % 2 === 1) words.push(...Array(tf).fill('basil'));
  if (i % 4 !== 0) words.push('cedar');
  if (i % 5 !== 0) words.push(...Array(tf).fill('amber'));
  if (i % 40 === 1) words.push('dill');
  if (i % 4 !== 2) words.push('fern');
  if (i % 6 !== 0) words.push('sage');
  words.push(...Array(i % 3).fill('pad'), `note${i}`);
  const terms = new Map<string, number>();
  for (const w of words) terms.set(w, (terms.get(w) ?? 0) + 1);
  return newMemory({
    text: words.join(' '),
    embedding: new Float32Array([1, 0, 0]),
    terms,
    tags: [`t${i % 2}`],
    mentioned_at: new Date('2024-01-01T00:00:00Z'),
  });
}

/** Long memories: 'long' 30 times, the 4 words of phase 2 and 100 of their own (past migration 54's bound of 64). */
const LONG = 40;
/** Most postings a memory of `mem` has (rare, basil, cedar, amber, dill, fern, sage, pad and its note). */
const SHORT_POSTINGS = 9;
/** Words phase 2 scores in every case. */
const WORDS = 4;

function long(i: number): NewMemory {
  const terms = new Map<string, number>([
    ['long', 30],
    ['cedar', 1],
    ['amber', 1],
    ['fern', 1],
    ['sage', 1],
  ]);
  for (let k = 0; k < 100; k++) terms.set(`own${i}x${k}`, 1);
  return newMemory({
    text: [...terms.keys()].join(' '),
    embedding: new Float32Array([1, 0, 0]),
    terms,
    tags: [`t${i % 2}`],
    mentioned_at: new Date('2024-01-01T00:00:00Z'),
  });
}

const rows = [
  ...Array.from({ length: SIZE }, (_, i) => mem(i)),
  ...Array.from({ length: LONG }, (_, i) => long(i)),
];
/** `long`: how many of the candidates are long memories. */
interface Case {
  terms: string[];
  drivers: number;
  long: number;
  filter: MemoryFilter;
  pass: (r: NewMemory) => boolean;
}
/** A case without a filter. */
const unfiltered = (terms: string[], drivers: number, long = 0): Case => ({
  terms,
  drivers,
  long,
  filter: {},
  pass: () => true,
});
const cases: Case[] = [
  unfiltered(['rare', 'basil', 'cedar', 'amber', 'fern', 'sage'], 2),
  {
    terms: ['sage', 'amber', 'cedar', 'basil', 'fern', 'rare'],
    drivers: 2,
    long: 0,
    filter: { tags: ['t0'], tagsMatch: 'any_strict' },
    pass: (r) => r.tags.includes('t0'),
  },
  unfiltered(['rare', 'dill', 'basil', 'cedar', 'amber', 'fern', 'sage'], 3),
  // The long memories lead phase 1 ('long' is rare and frequent in them), so phase 2 scores them.
  unfiltered(['long', 'basil', 'cedar', 'amber', 'fern', 'sage'], 2, LONG),
];

async function fill(s: Store) {
  await s.ensureBank(P, BANK, {});
  for (let i = 0; i < rows.length; i += 400) await s.insertMemories(P, BANK, rows.slice(i, i + 400));
  // What a Recall does before it searches: planner statistics for the bank as it now is.
  await s.maintainStatistics();
}

interface PlanNode {
  'Relation Name'?: string;
  'Subplan Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows the scans of `relation` under `node` produced or threw away, over all their loops. */
function postingsRead(node: PlanNode, relation: string): number {
  const own =
    node['Relation Name'] === relation
      ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1)
      : 0;
  return own + (node.Plans ?? []).reduce((a, p) => a + postingsRead(p, relation), 0);
}

/** Scans of `relation` under `node`, over all their loops: an index scan is one descent of its index. */
function scansRun(node: PlanNode, relation: string): number {
  const own = node['Relation Name'] === relation ? (node['Actual Loops'] ?? 1) : 0;
  return own + (node.Plans ?? []).reduce((a, p) => a + scansRun(p, relation), 0);
}

/** The subplan named `name` (a CTE) under `node`. */
const subplan = (node: PlanNode, name: string): PlanNode | undefined =>
  node['Subplan Name'] === name ? node : (node.Plans ?? []).map((p) => subplan(p, name)).find(Boolean);

for (const engine of ENGINES) {
  describe(`keyword search, phase 2 (${engine})`, () => {
    let s: Store;
    /** PostgreSQL: a second session on the store's database, to read the function's plans. */
    let admin: pg.Client | null = null;
    let close: () => Promise<void>;
    before(async () => {
      if (engine === 'postgres') {
        const one = await oneConnectionPostgres();
        ({ store: s, admin, close } = one);
      } else {
        const store = await openTestStore(engine);
        s = store;
        close = () => store.dispose();
      }
      await fill(s);
    });
    after(() => close());

    for (const c of cases)
      test(`${c.terms.join(' ')}: the two-phase BM25 of the texts`, async () => {
        const want = await twoPhaseBm25(s, { projectId: P, bankId: BANK }, rows, c.terms, c.pass, 30);
        assert.equal(want.drivers, c.drivers);
        assert.equal(want.rest, WORDS, 'four words are scored in phase 2');
        const longIds = new Set(rows.slice(SIZE).map((r) => r.id));
        assert.equal(
          want.hits.filter((h) => longIds.has(h.id)).length,
          Math.min(c.long, 30),
          'the long memories lead the hits when they are candidates',
        );
        const hits = await s.keywordSearch(P, BANK, c.terms, c.filter, 30);
        assertSameHits(hits, want.hits);
      });

    if (engine === 'postgres') {
      /** The plans of the function's statement over 8 runs of each case (auto_explain, read on `admin`). */
      let runs: { run: number; terms: string[]; text: string; plan: PlanNode }[] = [];
      before(async () => {
        const plans: string[] = [];
        admin!.on('notice', (n: { message?: string }) => plans.push(n.message ?? ''));
        await admin!.query(
          "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = json; SET client_min_messages = log",
        );
        runs = [];
        // Past the five custom plans after which a session may keep the generic one.
        for (let run = 0; run < 8; run++)
          for (const c of cases) {
            plans.length = 0;
            await admin!.query(
              `SELECT * FROM mnemo_keyword_search($1, $2, $3, 30, ${CANDIDATES}, 2000, 1.2, 0.75, NULL, $4, $5, NULL, NULL)`,
              [P, BANK, c.terms, c.filter.tags ?? null, c.filter.tagsMatch ?? 'any'],
            );
            const inner = plans.find((p) => p.includes('WITH stats'));
            assert.ok(inner, 'auto_explain logged the function statement');
            const text = inner.slice(inner.indexOf('{'));
            runs.push({ run, terms: c.terms, text, plan: (JSON.parse(text) as { Plan: PlanNode }).Plan });
          }
      });

      test('postings read by phase 2: a short candidate its own, a long one one per word, on every run (custom and generic plans)', () => {
        for (const r of runs) {
          const extra = subplan(r.plan, 'CTE extra');
          assert.ok(extra, 'the plan has phase 2');
          const read = postingsRead(extra, 'memory_terms');
          const c = cases.find((x) => x.terms === r.terms)!;
          assert.ok(
            read <= (CANDIDATES - c.long) * SHORT_POSTINGS + c.long * WORDS,
            `run ${r.run}, ${r.terms.join(' ')}: phase 2 read ${read} postings`,
          );
        }
      });

      // Migration 54: a probe per candidate and word cost more than reading a short one whole.
      test('index scans of phase 2: one per short candidate, one per word of a long one', () => {
        for (const r of runs) {
          const scans = scansRun(subplan(r.plan, 'CTE extra')!, 'memory_terms');
          const c = cases.find((x) => x.terms === r.terms)!;
          assert.ok(
            scans <= CANDIDATES - c.long + c.long * WORDS,
            `run ${r.run}, ${r.terms.join(' ')}: phase 2 ran ${scans} index scans`,
          );
        }
      });

      // Migration 53: planning it with the arguments as constants cost a quarter of each call.
      test('the statement is planned without its arguments, from the first call on', () => {
        for (const r of runs) {
          const where = `run ${r.run}, ${r.terms.join(' ')}`;
          assert.ok(!r.text.includes(`'${BANK}'`), `${where}: the bank is a constant of the plan`);
          assert.match(r.text, /bank_id = \$2\b/, `${where}: the bank is the plan's parameter`);
        }
      });
    }
  });
}
