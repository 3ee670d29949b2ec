/**
 * The in-process keyword index (`src/store/keyword-memory.ts`) against the
 * SQL function over the bank `bench/recall-answers.ts` keeps (run that first, same `--database`).
 * Prints: the index's load time and heap (run with `node --expose-gc --import tsx` for the heap
 * figure), whether its hits and scores equal `mnemo_keyword_search`'s, exactly, for the Recall
 * questions of recall-answers (seed 11) and recall-cpu (seed 7) and for random term sets that
 * reach phase 1's other forms, and the CPU of one in-process search against the function's wall
 * time on an idle connection.
 *
 * Run: `MNEMO_TEST_DATABASE_URL=... node --expose-gc --import tsx bench/keyword-memory.ts
 *   [--database mnemo_answers] [--random 300]`
 */
import { analyzeQuery } from '../src/core/recall/query.js';
import { loadKeywordIndex } from '../src/store/keyword-index.js';
import { type KeywordPath, searchKeywordIndex } from '../src/store/keyword-memory-search.js';
import { openDatabase, storeOver } from '../src/store/open.js';
import { B, DRIVER_POSTINGS, K1 } from '../src/store/sql/search.js';
import { testApp } from '../test/helpers/app.js';
import { flag } from './flags.js';
import { BANK, variedQueries } from './load-driver.js';

const P = 'default';
const LIMIT = 100;
const database = flag('database', 'mnemo_answers');
const randomSets = Number(flag('random', '300'));
const admin = process.env.MNEMO_TEST_DATABASE_URL;
if (!admin) throw new Error('MNEMO_TEST_DATABASE_URL is not set');
const u = new URL(admin);
u.pathname = `/${database}`;
const db = await openDatabase({ databaseUrl: u.toString() });
const store = storeOver(db, { keywordCacheMb: 0 });
const t = await testApp('postgres', { store, recallCacheSize: 0 });
const gc = (globalThis as { gc?: () => void }).gc;

/** The JS heap and the typed arrays' buffers outside it. */
const used = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
gc?.();
const heap0 = used();
const load0 = performance.now();
const loaded = await loadKeywordIndex(db, P, BANK);
if (!loaded) throw new Error(`no bank ${BANK} in ${database}: run bench/recall-answers.ts first`);
const index = loaded;
const loadMs = performance.now() - load0;
gc?.();
const heapBytes = used() - heap0;
const typed = [index.df, index.idf, index.start, index.doc, index.tf, index.dl]
  .concat([index.docStart, index.docTerm, index.docTf, index.docDl, index.scratch])
  .reduce((a, x) => a + x.byteLength, 0);
console.log(
  `index: ${index.ids.length} memories, ${index.terms.size} terms, ${index.doc.length} postings; loaded in ${loadMs.toFixed(0)} ms; ` +
    `heap and buffers ${gc ? `${(heapBytes / 2 ** 20).toFixed(1)} MiB` : '(run with --expose-gc)'}, of which typed arrays ${(typed / 2 ** 20).toFixed(1)} MiB`,
);

const opts = {
  limit: LIMIT,
  candidates: Math.max(LIMIT, 100),
  driverPostings: DRIVER_POSTINGS,
  k1: K1,
  b: B,
};
/** The function's hits, called as `keywordSql` calls it (filter off). */
const sqlHits = async (terms: string[], driverPostings: number) =>
  (
    await db.query<{ id: string; score: number }>(
      `SELECT memory_id::text AS id, score FROM mnemo_keyword_search($1, $2, $3::text[], $4::int, $5::int, $6::int,
         $7::float8, $8::float8, NULL, NULL, 'any', NULL, NULL)`,
      [P, BANK, terms, LIMIT, opts.candidates, driverPostings, K1, B],
    )
  ).map((r) => ({ id: r.id, score: Number(r.score) }));

interface Tally {
  sets: number;
  identical: number;
  sameIds: number;
  maxDiff: number;
  paths: Record<KeywordPath, number>;
}
const tally = (): Tally => ({
  sets: 0,
  identical: 0,
  sameIds: 0,
  maxDiff: 0,
  paths: { none: 0, pair: 0, summed: 0, capped: 0 },
});
async function compare(into: Tally, terms: string[], driverPostings = DRIVER_POSTINGS) {
  const want = await sqlHits(terms, driverPostings);
  const got = searchKeywordIndex(index, terms, { ...opts, driverPostings });
  into.sets++;
  into.paths[got.path]++;
  const sameIds = want.length === got.hits.length && want.every((h, i) => h.id === got.hits[i]!.id);
  if (sameIds) into.sameIds++;
  if (sameIds && want.every((h, i) => h.score === got.hits[i]!.score)) into.identical++;
  else if (sameIds)
    into.maxDiff = Math.max(into.maxDiff, ...want.map((h, i) => Math.abs(h.score - got.hits[i]!.score)));
}

const NOW = new Date('2026-11-27T12:00:00Z');
const termsOf = async (next: () => string, count: number) => {
  const out: string[][] = [];
  for (let i = 0; i < count; i++)
    out.push([...new Set((await analyzeQuery(t.services, next(), NOW, undefined)).terms)]);
  return out;
};
const answers = await termsOf(variedQueries(11), 300);
const cpu = await termsOf(variedQueries(7), 401);
const results: Record<string, Tally> = {
  'recall-answers (seed 11)': tally(),
  'recall-cpu (seed 7)': tally(),
};
for (const terms of answers) await compare(results['recall-answers (seed 11)']!, terms);
for (const terms of cpu) await compare(results['recall-cpu (seed 7)']!, terms);

// Random term sets over the bank's vocabulary: rare terms (summed phase 1), every word common
// (capped), and the budget lowered so that most sets are past it.
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const vocabulary = [...index.terms.keys()];
const rare = vocabulary.filter((w) => index.df[index.terms.get(w)!]! <= 5);
const common = vocabulary.filter((w) => index.df[index.terms.get(w)!]! > 5);
const pick = (xs: string[], n: number) =>
  Array.from({ length: n }, () => xs[Math.floor(random() * xs.length)]!);
results['random, rare + common'] = tally();
results['random, common only, budget 300'] = tally();
for (let i = 0; i < randomSets; i++) {
  const terms = [...new Set([...pick(rare, 1 + (i % 4)), ...pick(common, 2 + (i % 9))])];
  await compare(results['random, rare + common']!, terms);
  await compare(results['random, common only, budget 300']!, [...new Set(pick(common, 2 + (i % 12)))], 300);
}
for (const [name, r] of Object.entries(results))
  console.log(
    `${name}: ${r.sets} sets, ${r.identical} identical (ids, order and every score), ${r.sameIds} same ids; ` +
      `largest score difference ${r.maxDiff}; phase 1 ${JSON.stringify(r.paths)}`,
  );

// CPU of the in-process search per Recall question, and the function's wall time (idle connection).
const rounds = 20;
for (let r = 0; r < 2; r++) for (const terms of cpu) searchKeywordIndex(index, terms, opts); // warm-up
const c0 = process.cpuUsage();
const w0 = performance.now();
for (let r = 0; r < rounds; r++) for (const terms of cpu) searchKeywordIndex(index, terms, opts);
const c1 = process.cpuUsage(c0);
const inMemoryMs = (performance.now() - w0) / (rounds * cpu.length);
const inMemoryCpuMs = (c1.user + c1.system) / 1000 / (rounds * cpu.length);
const s0 = performance.now();
for (const terms of cpu) await sqlHits(terms, DRIVER_POSTINGS);
const sqlMs = (performance.now() - s0) / cpu.length;
console.log(
  `per question (${cpu.length} recall-cpu questions): in-process ${(inMemoryMs * 1000).toFixed(0)} µs wall, ` +
    `${(inMemoryCpuMs * 1000).toFixed(0)} µs CPU; the SQL function alone ${sqlMs.toFixed(2)} ms wall (round trip included)`,
);
await t.close();
