/**
 * Recall quality on the LoCoMo development split, by the protocol of
 * ../shared/bench/locomo/README.md, through the HTTP API of an in-process server (port 0, a
 * temporary data directory). Every turn is retained as one memory, a session per request
 * (`--per-turn`: one request per turn, as an agent retaining live would), then every question
 * of categories 1-4 is asked verbatim with the default budget. Beside every figure, BM25 over
 * the same turns (bench/bm25.ts), computed on the questions asked.
 *
 * Run: `npx tsx bench/locomo.ts [--per-turn] [--engine postgres] [--config '{"enable_reranking":false}']
 * [--samples conv-26,conv-30] [--categories 1,3] [--explain | --diagnose]` (or `npm run bench -- locomo`).
 * `--explain` prints, for every evidence turn outside the top 10, its rank, each channel's rank
 * and score for it, and what outranks it. MNEMO_LOCOMO_FILE overrides the data file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bm25 } from './bm25.js';
import { benchServer, configuredBank } from './api-server.js';
import { explainMisses, formatTally } from './explain.js';

export const DEFAULT_FILE = fileURLToPath(
  new URL('../../shared/bench/locomo/locomo-dev.json', import.meta.url),
);
export const CATEGORIES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};
/** Enough for 20 results of any LoCoMo turn. */
const MAX_TOKENS = 20_000;
/** Questions asked at once. */
const PARALLEL = 4;

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence?: string[]; category: number }[];
}

export interface LocomoOptions {
  perTurn?: boolean;
  engine?: 'pglite' | 'postgres';
  /** Bank config overrides (e.g. `{ enable_reranking: false }`), for ablations. */
  config?: Record<string, unknown>;
  file?: string;
  /** Only these sample ids (quick runs). */
  samples?: string[];
  /** Only these categories (1-4). */
  categories?: number[];
  /** Print, for every evidence turn outside the top 10, its ranks and what outranks it. */
  explain?: boolean;
}

/** "1:56 pm on 8 May, 2023" as UTC. */
function sessionDate(s: string): Date {
  const m = /(\d+):(\d+)\s*(am|pm) on (\d+) (\w+),? (\d{4})/i.exec(s);
  if (!m) throw new Error(`unreadable session date: ${s}`);
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  const month = new Date(`${m[5]} 1, 2000 UTC`).getUTCMonth();
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

export const diaKey = (raw: string): string | null => {
  const m = /D:?(\d+):0*(\d+)/.exec(raw);
  return m ? `D${m[1]}:${m[2]}` : null;
};

export interface Question {
  sample: string;
  question: string;
  category: number;
  evidence: string[];
}

export function sessionsOf(sample: Sample): { n: number; date: Date; turns: Turn[] }[] {
  const c = sample.conversation;
  return Object.keys(c)
    .flatMap((k) => {
      const m = /^session_(\d+)$/.exec(k);
      return m ? [Number(m[1])] : [];
    })
    .sort((a, b) => a - b)
    .map((n) => ({
      n,
      date: sessionDate(String(c[`session_${n}_date_time`])),
      turns: c[`session_${n}`] as Turn[],
    }));
}

export function questionsOf(sample: Sample): Question[] {
  const ids = new Set(sessionsOf(sample).flatMap((s) => s.turns.flatMap((t) => diaKey(t.dia_id) ?? [])));
  return sample.qa.flatMap((qa) => {
    if (!(qa.category in CATEGORIES)) return [];
    const evidence = [
      ...new Set(
        (qa.evidence ?? []).flatMap((e) => String(e).split(/[;,\s]+/)).flatMap((e) => diaKey(e) ?? []),
      ),
    ].filter((e) => ids.has(e));
    return evidence.length
      ? [{ sample: sample.sample_id, question: qa.question, category: qa.category, evidence }]
      : [];
  });
}

interface Tally {
  n: number;
  r5: number;
  r10: number;
  r20: number;
  any10: number;
  mrr: number;
  chars: number;
  b10: number;
  bmrr: number;
}

const empty = (): Tally => ({ n: 0, r5: 0, r10: 0, r20: 0, any10: 0, mrr: 0, chars: 0, b10: 0, bmrr: 0 });

/** The text a turn is retained as (and BM25 indexes). */
export const turnText = (t: Turn) =>
  `${t.speaker}: ${t.text}${t.blip_caption ? ` [shares ${t.blip_caption}]` : ''}`;

/** The samples of the data file (`MNEMO_LOCOMO_FILE` overrides it), only `samples` when given. */
export function loadSamples(opts: { file?: string; samples?: string[] }): Sample[] {
  const file = opts.file ?? process.env.MNEMO_LOCOMO_FILE ?? DEFAULT_FILE;
  if (!existsSync(file)) throw new Error(`LoCoMo data not found at ${file} (set MNEMO_LOCOMO_FILE)`);
  const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
  return opts.samples ? samples.filter((s) => opts.samples!.includes(s.sample_id)) : samples;
}

/**
 * The Retain items of one session: a turn each, a second apart from the session's date, with
 * the dia id (how a turn is found again) and the session (which gives each turn its neighbours'
 * terms) in its metadata.
 */
export const sessionItems = (sample: Sample, session: ReturnType<typeof sessionsOf>[number]) =>
  session.turns.map((t, i) => ({
    content: turnText(t),
    timestamp: new Date(session.date.getTime() + i * 1000).toISOString(),
    metadata: {
      sample_id: sample.sample_id,
      dia_id: diaKey(t.dia_id),
      session: session.n,
      speaker: t.speaker,
    },
  }));

/** Runs the protocol; returns one row per category and overall, beside the reference. */
export async function benchLocomo(opts: LocomoOptions = {}): Promise<Record<string, string | number>[]> {
  const samples = loadSamples(opts);
  const { server, call, close } = await benchServer('locomo', opts.engine);
  try {
    const started = performance.now();
    let memories = 0;
    for (const sample of samples) {
      const bank = encodeURIComponent(`locomo-${sample.sample_id}`);
      if (opts.config) await configuredBank(call, bank, opts.config);
      for (const session of sessionsOf(sample)) {
        const items = sessionItems(sample, session);
        memories += items.length;
        if (opts.perTurn)
          for (const item of items) await call('POST', `/banks/${bank}/memories`, { items: [item] });
        else await call('POST', `/banks/${bank}/memories`, { items });
      }
    }
    const retainSeconds = (performance.now() - started) / 1000;

    const questions = samples
      .flatMap(questionsOf)
      .filter((q) => !opts.categories || opts.categories.includes(q.category));
    const bm25 = new Map(
      samples.map((sample) => [
        sample.sample_id,
        new Bm25(
          sessionsOf(sample).flatMap((s) =>
            s.turns.flatMap((t) => {
              const key = diaKey(t.dia_id);
              return key ? [{ key, text: turnText(t) }] : [];
            }),
          ),
        ),
      ]),
    );
    const tallies = new Map<string, Tally>();
    const missCounts = new Map<string, number>();
    const latencies: number[] = [];
    const ask = async (q: Question) => {
      const t0 = performance.now();
      const r = await call('POST', `/banks/${encodeURIComponent(`locomo-${q.sample}`)}/memories/recall`, {
        query: q.question,
        max_tokens: MAX_TOKENS,
      });
      latencies.push(performance.now() - t0);
      const top: { dia: string | null; chars: number }[] = r.results.slice(0, 20).map((x: any) => ({
        dia: typeof x.metadata?.dia_id === 'string' ? x.metadata.dia_id : null,
        chars: x.text.length,
      }));
      const evidence = new Set(q.evidence);
      const found = (k: number) =>
        new Set(top.slice(0, k).flatMap((t) => (t.dia && evidence.has(t.dia) ? [t.dia] : []))).size;
      const first = top.findIndex((t) => t.dia !== null && evidence.has(t.dia));
      const baseline = bm25.get(q.sample)!.rank(q.question);
      const b10 = baseline.slice(0, 10).filter((d) => evidence.has(d)).length / evidence.size;
      const bFirst = baseline.slice(0, 20).findIndex((d) => evidence.has(d));
      if (opts.explain && found(10) < evidence.size) {
        process.stderr.write(
          `${await explainMisses(server.services, {
            bank: `locomo-${q.sample}`,
            title: `${q.sample} [${CATEGORIES[q.category]}] ${q.question}`,
            tally: { group: `${q.category} ${CATEGORIES[q.category]}`, counts: missCounts },
            query: q.question,
            gold: evidence,
            keyOf: (m) => (typeof m.metadata.dia_id === 'string' ? m.metadata.dia_id : null),
            results: r.results,
            bm25: baseline,
          })}\n`,
        );
      }
      for (const key of [`${q.category} ${CATEGORIES[q.category]}`, 'overall']) {
        const t = tallies.get(key) ?? empty();
        t.n++;
        t.r5 += found(5) / evidence.size;
        t.r10 += found(10) / evidence.size;
        t.r20 += found(20) / evidence.size;
        t.any10 += found(10) > 0 ? 1 : 0;
        t.mrr += first >= 0 ? 1 / (first + 1) : 0;
        t.chars += top.slice(0, 10).reduce((n, x) => n + x.chars, 0);
        t.b10 += b10;
        t.bmrr += bFirst >= 0 ? 1 / (bFirst + 1) : 0;
        tallies.set(key, t);
      }
    };
    const recallStarted = performance.now();
    for (let i = 0; i < questions.length; i += PARALLEL)
      await Promise.all(questions.slice(i, i + PARALLEL).map(ask));
    const recallSeconds = (performance.now() - recallStarted) / 1000;
    if (opts.explain) process.stderr.write(`\nmissed evidence turns by class:\n${formatTally(missCounts)}\n`);

    const r3 = (x: number) => Number(x.toFixed(3));
    const rows: Record<string, string | number>[] = [
      ...Object.entries(CATEGORIES).map(([n, name]) => `${n} ${name}`),
      'overall',
    ]
      .filter((k) => tallies.has(k))
      .map((key) => {
        const t = tallies.get(key)!;
        return {
          category: key,
          n: t.n,
          'R@5': r3(t.r5 / t.n),
          'R@10': r3(t.r10 / t.n),
          'R@20': r3(t.r20 / t.n),
          'any@10': r3(t.any10 / t.n),
          'MRR@20': r3(t.mrr / t.n),
          'BM25 R@10': r3(t.b10 / t.n),
          'BM25 MRR@20': r3(t.bmrr / t.n),
          'chars@10': Math.round(t.chars / t.n),
        };
      });
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
    rows.push({
      category: `run: ${memories} memories, ${opts.perTurn ? 'one request per turn' : 'one request per session'}, ${server.services.store.engine}`,
      n: questions.length,
      'R@5': '',
      'R@10': '',
      'R@20': '',
      'any@10': '',
      'MRR@20': '',
      'BM25 R@10': '',
      'BM25 MRR@20': '',
      'chars@10': `retain ${retainSeconds.toFixed(1)} s; recall p50 ${pct(50).toFixed(1)} ms, p95 ${pct(95).toFixed(1)} ms (${PARALLEL} at once), ${recallSeconds.toFixed(1)} s`,
    });
    return rows;
  } finally {
    await close();
  }
}

/** Command-line flags of a direct run. */
export function locomoArgs(argv: string[]): LocomoOptions {
  const opts: LocomoOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--per-turn') opts.perTurn = true;
    else if (a === '--engine') opts.engine = argv[++i] === 'postgres' ? 'postgres' : 'pglite';
    else if (a === '--config') opts.config = JSON.parse(argv[++i] ?? '{}');
    else if (a === '--samples') opts.samples = (argv[++i] ?? '').split(',');
    else if (a === '--categories') opts.categories = (argv[++i] ?? '').split(',').map(Number);
    else if (a === '--explain' || a === '--diagnose') opts.explain = true;
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchLocomo(locomoArgs(process.argv.slice(2))));
}
