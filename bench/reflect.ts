/**
 * Reflect without a language model over a bank of 10,000 memories (latency per budget), and
 * consolidation by rules over a smaller bank of 2,000 (its throughput, then Reflect latency with
 * the observations it made). Memories are synthetic facts about 60 people (jobs, homes, pets,
 * habits, trips), about one in eight restated, so that consolidation has work to do.
 * Consolidation is measured on the smaller bank because a first run over a whole bank compares
 * every memory with the bank (brute-force vector search), which grows with the square of its size;
 * after Retain it only looks at the new memories.
 * Run: `npx tsx bench/reflect.ts [--memories 10000] [--consolidate 2000] [--queries 60] [--engine postgres]`
 * (`--consolidate 0` skips consolidation).
 */
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { consolidateBank } from '../src/core/consolidate/consolidate.js';
import type { Budget } from '../src/core/recall/budget.js';
import { recall } from '../src/core/recall/recall.js';
import { EVIDENCE_TOKENS } from '../src/core/reflect/evidence.js';
import { reflect } from '../src/core/reflect/reflect.js';
import { retain } from '../src/core/retain/retain.js';
import type { Services } from '../src/core/services.js';
import { compose } from '../src/runtime/compose.js';
import { openStore } from '../src/store/open.js';
import { createTestDatabase } from '../test/helpers/engines.js';

const NAMES = (
  'Alice Bruno Chen Dana Emeka Farah Goran Hana Ivan Jonas Kemal Lena Mateo Nadia Omar Priya Quinn Rosa Sami Tariq ' +
  'Ulla Viktor Wen Ximena Yusuf Zara Aiko Bilal Carmen Dmitri Elif Femi Greta Hugo Ines Jamal Kira Luca Maya Nils ' +
  'Olga Pavel Rania Sven Talia Umar Vera Wiktor Yara Zeno Amir Beata Cyrus Delia Ezra Fiona Gil Hedda Igor Juno'
).split(' ');
const JOBS = [
  'nurse',
  'carpenter',
  'teacher',
  'pharmacist',
  'pilot',
  'chef',
  'architect',
  'librarian',
  'plumber',
  'designer',
];
const PLACES = [
  'Lisbon',
  'Porto',
  'Berlin',
  'Leeds',
  'Osaka',
  'Denver',
  'Quito',
  'Tallinn',
  'Accra',
  'Perth',
];
const PETS = [
  'a beagle named Pepper',
  'a cat called Miso',
  'two goldfish',
  'a parrot named Kiwi',
  'a tortoise called Sheldon',
];
const HOBBIES = [
  'plays the cello',
  'climbs on weekends',
  'bakes sourdough bread',
  'runs half marathons',
  'paints watercolours',
  'collects vinyl records',
  'grows tomatoes',
  'plays chess online',
];
const MONTHS = ['January', 'March', 'May', 'July', 'September', 'November'];

function lcg(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((s / 2 ** 31) * n);
  };
}

/** The i-th memory: a fact, sometimes a restatement of an earlier one, rarely a contradiction. */
function memories(count: number): string[] {
  const pick = lcg(7);
  const out: string[] = [];
  const templates = [
    (n: string) => `${n} works as a ${JOBS[pick(JOBS.length)]} in ${PLACES[pick(PLACES.length)]}.`,
    (n: string) => `${n} lives in ${PLACES[pick(PLACES.length)]}.`,
    (n: string) => `${n} has ${PETS[pick(PETS.length)]}.`,
    (n: string) => `${n} ${HOBBIES[pick(HOBBIES.length)]}.`,
    (n: string) =>
      `${n} visited ${PLACES[pick(PLACES.length)]} in ${MONTHS[pick(MONTHS.length)]} with friends from work.`,
    (n: string) =>
      `${n} said the trip to ${PLACES[pick(PLACES.length)]} was ${['exhausting', 'wonderful', 'too short', 'rainy'][pick(4)]}.`,
    (n: string) =>
      `${n} is learning ${['Japanese', 'Spanish', 'the guitar', 'to swim', 'pottery'][pick(5)]} this year.`,
  ];
  for (let i = 0; i < count; i++) {
    if (i > 10 && pick(8) === 0) {
      out.push(out[pick(out.length)]!.replace(/\.$/, '')); // a restatement
      continue;
    }
    out.push(templates[pick(templates.length)]!(NAMES[pick(NAMES.length)]!));
  }
  return out;
}

function questions(count: number): string[] {
  const pick = lcg(11);
  const forms = [
    (n: string) => `Where does ${n} live?`,
    (n: string) => `What does ${n} do for a living?`,
    (n: string) => `Does ${n} have any pets?`,
    (n: string) => `What are ${n}'s hobbies?`,
    (n: string) => `Where did ${n} travel, and how was it?`,
  ];
  return Array.from({ length: count }, () => forms[pick(forms.length)]!(NAMES[pick(NAMES.length)]!));
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function latency(s: Services, bank: string, qs: string[], budget: Budget, recallOnly = false) {
  const times: number[] = [];
  for (const q of qs) {
    const started = performance.now();
    if (recallOnly)
      await recall(s, 'default', bank, { query: q, budget, max_tokens: EVIDENCE_TOKENS[budget] });
    else if ((await reflect(s, 'default', bank, { query: q, budget })).mode !== 'extractive') {
      throw new Error('expected an extractive answer');
    }
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { p50: percentile(times, 50), p95: percentile(times, 95), mean };
}

export interface ReflectBenchOptions {
  memories?: number;
  /** Memories of the bank consolidation runs over; 0 skips it. */
  consolidate?: number;
  queries?: number;
  engine?: 'pglite' | 'postgres';
}

async function fill(s: Services, bank: string, texts: string[]): Promise<void> {
  for (let i = 0; i < texts.length; i += 500) {
    await retain(s, 'default', bank, { items: texts.slice(i, i + 500).map((content) => ({ content })) });
  }
}

/** Rows of `{ benchmark, metric, value, unit }`. */
export async function benchReflect(
  opts: ReflectBenchOptions = {},
): Promise<Record<string, string | number>[]> {
  const n = opts.memories ?? 10_000;
  const engine = opts.engine ?? 'pglite';
  const database = engine === 'postgres' ? await createTestDatabase() : null;
  const store = await openStore({ databaseUrl: database?.url });
  const config = loadConfig({ logLevel: 'silent' }, {});
  const { services: s } = await compose(config, { store, now: () => new Date('2024-12-01T00:00:00Z') });
  const rows: Record<string, string | number>[] = [];
  const row = (metric: string, value: number, unit: string) => {
    rows.push({ benchmark: `reflect.${engine}`, metric, value: Math.round(value * 10) / 10, unit });
    process.stderr.write(`${metric}: ${Math.round(value * 10) / 10} ${unit}\n`);
  };
  try {
    const bank = 'bench-reflect';
    let started = performance.now();
    await fill(s, bank, memories(n));
    row(`retain ${n} memories (setup)`, (performance.now() - started) / 1000, 's');
    const qs = questions(opts.queries ?? 60);
    await reflect(s, 'default', bank, { query: 'warm up' });
    for (const budget of ['low', 'mid', 'high'] as const) {
      const l = await latency(s, bank, qs, budget);
      row(`${n} memories, extractive, budget ${budget}: p50`, l.p50, 'ms');
      row(`${n} memories, extractive, budget ${budget}: p95`, l.p95, 'ms');
    }
    // Reflect's own share: the Recall it makes, alone, with the same evidence budget.
    const r = await latency(s, bank, qs, 'mid', true);
    row(`${n} memories, the Recall inside (budget mid): p50`, r.p50, 'ms');
    const m = opts.consolidate ?? 2_000;
    if (m > 0) {
      const small = 'bench-consolidate';
      await fill(s, small, memories(m));
      started = performance.now();
      const result = await consolidateBank(s, 'default', small);
      const seconds = (performance.now() - started) / 1000;
      row(`consolidation (rules), first run over ${m} memories`, seconds, 's');
      row('consolidation throughput', result.processed / seconds, 'memories/s');
      row('observations created', result.observations_created, 'count');
      row('observations marked contradicted', result.contradictions, 'count');
      const l = await latency(s, small, qs, 'mid');
      row(`${m} memories with observations, budget mid: p50`, l.p50, 'ms');
      row(`${m} memories with observations, budget mid: p95`, l.p95, 'ms');
    }
  } finally {
    await store.close();
    await database?.drop();
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  console.table(
    await benchReflect({
      memories: Number(arg('--memories') ?? 10_000),
      consolidate: Number(arg('--consolidate') ?? 2_000),
      queries: Number(arg('--queries') ?? 60),
      engine: arg('--engine') === 'postgres' ? 'postgres' : 'pglite',
    }),
  );
}
