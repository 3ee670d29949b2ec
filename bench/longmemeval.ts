/**
 * Recall quality on the LongMemEval_S development split, by the protocol of
 * ../shared/bench/longmemeval/README.md: one bank per question, every non-blank user turn
 * retained as one memory (`chunks` mode, the session's date plus the turn's index in seconds,
 * `metadata.tid`), one request per session, through the HTTP API of an in-process app over an
 * in-memory embedded database; then the question asked verbatim with `query_timestamp` =
 * `question_date`. Beside every figure, BM25 over the same turns (bench/bm25.ts).
 *
 * Run: `npm run bench -- longmemeval [--types temporal-reasoning,multi-session] [--limit 5]
 * [--explain | --diagnose] [--engine postgres] [--config '{"enable_reranking":false}']`.
 * `--limit N` keeps the first N questions of each type; `--explain` prints, for every gold turn
 * outside the top 10, its rank, each channel's rank and score for it, and what outranks it.
 * MNEMO_LONGMEMEVAL_FILE overrides the data file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { ADMIN, type TestApp, testApp } from '../test/helpers/app.js';
import { Bm25 } from './bm25.js';
import { configuredBank } from './api-server.js';
import { explainMisses, formatTally } from './explain.js';

const DEFAULT_FILE = fileURLToPath(
  new URL('../../shared/bench/longmemeval/longmemeval-s-dev.json.gz', import.meta.url),
);
/** What the protocol asks of each Recall. */
const MAX_TOKENS = 32_000;
/** Characters of a turn retained (the protocol's cut). */
const MAX_CONTENT = 20_000;
/** Banks ingested and questions asked at once (the embedded engine serialises them anyway). */
const PARALLEL = 2;

const TYPES = [
  'single-session-user',
  'single-session-assistant',
  'single-session-preference',
  'multi-session',
  'knowledge-update',
  'temporal-reasoning',
] as const;

interface RawTurn {
  turn: number;
  content: string;
  has_answer?: boolean;
}

interface RawQuestion {
  question_id: string;
  question_type: string;
  question: string;
  question_date: string;
  answer: unknown;
  answer_session_ids: string[];
  haystack_dates: string[];
  haystack_session_ids: string[];
  haystack_sessions: RawTurn[][];
}

export interface LongMemEvalOptions {
  /** Only these question types. */
  types?: string[];
  /** At most this many questions of each type (the file's order). */
  limit?: number;
  /** Only these question ids. */
  questions?: string[];
  explain?: boolean;
  engine?: 'pglite' | 'postgres';
  /** Bank config overrides, for ablations. */
  config?: Record<string, unknown>;
  file?: string;
  /** Progress and explanations go here (stderr by default). */
  log?: (line: string) => void;
}

/** "2023/05/30 (Tue) 23:42" as UTC. */
export function haystackDate(s: string): Date {
  const m = /(\d{4})\/(\d{2})\/(\d{2})\D+(\d{1,2}):(\d{2})/.exec(s);
  if (!m) throw new Error(`unreadable haystack date: ${s}`);
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5])));
}

/** The turns a question's bank holds, session by session, with their turn ids. */
function sessionsOf(q: RawQuestion) {
  return q.haystack_sessions.map((turns, i) => {
    const id = q.haystack_session_ids[i]!;
    const date = haystackDate(q.haystack_dates[i]!);
    return {
      id,
      turns: turns
        .filter((t) => t.content.trim() !== '')
        .map((t) => ({
          tid: `${id}_${t.turn + 1}`,
          content: t.content.slice(0, MAX_CONTENT),
          timestamp: new Date(date.getTime() + t.turn * 1000),
          gold: t.has_answer === true && id.includes('answer'),
        })),
    };
  });
}

interface Tally {
  n: number;
  r5: number;
  r10: number;
  any5: number;
  mrr: number;
  b5: number;
  b10: number;
  bany5: number;
  bmrr: number;
}

const empty = (): Tally => ({ n: 0, r5: 0, r10: 0, any5: 0, mrr: 0, b5: 0, b10: 0, bany5: 0, bmrr: 0 });

/** Share of gold in the first k, any gold in the first k, reciprocal rank of the first gold. */
function score(ranked: string[], gold: Set<string>) {
  const found = (k: number) => ranked.slice(0, k).filter((t) => gold.has(t)).length;
  const first = ranked.findIndex((t) => gold.has(t));
  return {
    r5: found(5) / gold.size,
    r10: found(10) / gold.size,
    any5: found(5) > 0 ? 1 : 0,
    mrr: first >= 0 ? 1 / (first + 1) : 0,
  };
}

export function loadLongMemEval(opts: LongMemEvalOptions): RawQuestion[] {
  const file = opts.file ?? process.env.MNEMO_LONGMEMEVAL_FILE ?? DEFAULT_FILE;
  if (!existsSync(file))
    throw new Error(`LongMemEval data not found at ${file} (set MNEMO_LONGMEMEVAL_FILE)`);
  let questions = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as RawQuestion[];
  if (opts.types) questions = questions.filter((q) => opts.types!.includes(q.question_type));
  if (opts.questions) questions = questions.filter((q) => opts.questions!.includes(q.question_id));
  // Questions without a gold turn are skipped (protocol step 2).
  questions = questions.filter((q) => sessionsOf(q).some((s) => s.turns.some((t) => t.gold)));
  if (opts.limit !== undefined) {
    const seen = new Map<string, number>();
    questions = questions.filter((q) => {
      const n = (seen.get(q.question_type) ?? 0) + 1;
      seen.set(q.question_type, n);
      return n <= opts.limit!;
    });
  }
  return questions;
}

async function ingest(t: TestApp, bank: string, q: RawQuestion, config?: Record<string, unknown>) {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await t.call(method, `/v1/default${path}`, { body, token: ADMIN });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  if (config) await configuredBank(call, bank, config);
  let n = 0;
  for (const session of sessionsOf(q)) {
    if (session.turns.length === 0) continue;
    const items = session.turns.map((turn) => ({
      content: turn.content,
      timestamp: turn.timestamp.toISOString(),
      metadata: { tid: turn.tid },
    }));
    n += items.length;
    await call('POST', `/banks/${bank}/memories`, { items });
  }
  return n;
}

/** Runs the protocol; one row per question type and overall, mnemo beside BM25. */
export async function benchLongMemEval(
  opts: LongMemEvalOptions = {},
): Promise<Record<string, string | number>[]> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const questions = loadLongMemEval(opts);
  // Hundreds of banks of one project are filled at full speed: past the default cost budget of
  // retained items per minute, which is there for runaway clients, not for a benchmark.
  const t = await testApp(opts.engine ?? 'pglite', { defaultRetainedItemsPerMinute: 10_000_000 });
  try {
    const tallies = new Map<string, Tally>();
    const missCounts = new Map<string, number>();
    const latencies: number[] = [];
    let memories = 0;
    let retainMs = 0;
    const run = async (q: RawQuestion) => {
      const bank = `lme-${q.question_id}`;
      const t0 = performance.now();
      const turns = await ingest(t, bank, q, opts.config);
      memories += turns;
      retainMs += performance.now() - t0;
      const sessions = sessionsOf(q);
      const gold = new Set(sessions.flatMap((s) => s.turns.filter((x) => x.gold).map((x) => x.tid)));
      const t1 = performance.now();
      const r = await t.call('POST', `/v1/default/banks/${bank}/memories/recall`, {
        body: {
          query: q.question,
          max_tokens: MAX_TOKENS,
          query_timestamp: haystackDate(q.question_date).toISOString(),
        },
      });
      latencies.push(performance.now() - t1);
      if (r.status !== 200) throw new Error(`recall ${bank}: ${r.status} ${JSON.stringify(r.body)}`);
      const results = r.body.results as { id: string; text: string; metadata: { tid?: string } }[];
      const ranked = [...new Set(results.flatMap((x) => (x.metadata.tid ? [x.metadata.tid] : [])))];
      const bm25 = new Bm25(sessions.flatMap((s) => s.turns.map((x) => ({ key: x.tid, text: x.content }))));
      const bm25Ranked = bm25.rank(q.question);
      const mine = score(ranked, gold);
      const base = score(bm25Ranked, gold);
      for (const key of [q.question_type, 'overall']) {
        const tally = tallies.get(key) ?? empty();
        tally.n++;
        tally.r5 += mine.r5;
        tally.r10 += mine.r10;
        tally.any5 += mine.any5;
        tally.mrr += mine.mrr;
        tally.b5 += base.r5;
        tally.b10 += base.r10;
        tally.bany5 += base.any5;
        tally.bmrr += base.mrr;
        tallies.set(key, tally);
      }
      if (opts.explain && mine.r10 < 1) {
        log(
          await explainMisses(t.services, {
            bank,
            title: `${q.question_id} [${q.question_type}] ${q.question} (asked ${q.question_date}; answer: ${String(q.answer).slice(0, 120)})`,
            tally: { group: q.question_type, counts: missCounts },
            query: q.question,
            reference: haystackDate(q.question_date),
            gold,
            keyOf: (m) => (typeof m.metadata.tid === 'string' ? m.metadata.tid : null),
            results,
            bm25: bm25Ranked,
          }),
        );
      }
      // The bank is not needed any more: the next ones search a smaller database.
      await t.call('DELETE', `/v1/default/banks/${bank}`);
    };
    const started = performance.now();
    let done = 0;
    for (let i = 0; i < questions.length; i += PARALLEL) {
      await Promise.all(questions.slice(i, i + PARALLEL).map(run));
      done = Math.min(questions.length, i + PARALLEL);
      if (!opts.explain) log(`  ${done}/${questions.length} questions`);
    }
    const seconds = (performance.now() - started) / 1000;
    if (opts.explain) log(`\nmissed gold turns by class:\n${formatTally(missCounts)}`);

    const r3 = (x: number) => Number(x.toFixed(3));
    const rows: Record<string, string | number>[] = [...TYPES, 'overall']
      .filter((k) => tallies.has(k))
      .map((key) => {
        const x = tallies.get(key)!;
        return {
          type: key,
          n: x.n,
          'R@5': r3(x.r5 / x.n),
          'BM25 R@5': r3(x.b5 / x.n),
          'R@10': r3(x.r10 / x.n),
          'BM25 R@10': r3(x.b10 / x.n),
          'any@5': r3(x.any5 / x.n),
          'BM25 any@5': r3(x.bany5 / x.n),
          MRR: r3(x.mrr / x.n),
          'BM25 MRR': r3(x.bmrr / x.n),
        };
      });
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
    rows.push({
      type: `run: ${questions.length} banks, ${memories} turns, ${t.services.store.engine}`,
      n: questions.length,
      'R@5': `retain ${(retainMs / 1000).toFixed(0)} s (summed, ${PARALLEL} at once)`,
      'R@10': `recall p50 ${pct(50).toFixed(0)} ms, p95 ${pct(95).toFixed(0)} ms`,
      'any@5': `${seconds.toFixed(0)} s in all`,
    });
    return rows;
  } finally {
    await t.close();
  }
}

/** Command-line flags of a direct run. */
export function longMemEvalArgs(argv: string[]): LongMemEvalOptions {
  const opts: LongMemEvalOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--types') opts.types = (argv[++i] ?? '').split(',');
    else if (a === '--limit') opts.limit = Number(argv[++i]);
    else if (a === '--questions') opts.questions = (argv[++i] ?? '').split(',');
    else if (a === '--explain' || a === '--diagnose') opts.explain = true;
    else if (a === '--engine') opts.engine = argv[++i] === 'postgres' ? 'postgres' : 'pglite';
    else if (a === '--config') opts.config = JSON.parse(argv[++i] ?? '{}');
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchLongMemEval(longMemEvalArgs(process.argv.slice(2))));
}
