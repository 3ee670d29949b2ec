/**
 * Local embedder benchmark: cold cache build, warm load and resident memory in a fresh process, and
 * sentences per second. `npx tsx bench/embed.ts` prints the table.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createLocalEmbedder, loadSifModel } from '../src/embed/local.js';

const SENTENCES = 20_000;
const BATCH = 256;
const localModule = pathToFileURL(fileURLToPath(new URL('../src/embed/local.ts', import.meta.url))).href;

/** Memory-like sentences of 6 to 20 words, the same on every run. */
function sentences(count: number): string[] {
  const words = (
    'the user said she adopted a puppy last week and walks it every morning in the park near her new ' +
    'apartment downtown; he works as a nurse at the hospital, prefers tea over coffee, plans a trip to ' +
    "Tokyo in March, can't eat peanuts, and his daughter's birthday is on 12 July 2019 at 5pm"
  ).split(' ');
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 6 + Math.floor(random() * 15) },
      () => words[Math.floor(random() * words.length)],
    ).join(' '),
  );
}

/** Loads the model in a new process, as a starting server would: load time and resident memory. */
async function freshProcessLoad(
  cacheDir: string,
): Promise<{ loadMs: number; rssMB: number; baseMB: number }> {
  const script = `
    const base = process.memoryUsage().rss;
    const { loadSifModel } = await import(${JSON.stringify(localModule)});
    const started = performance.now();
    const model = await loadSifModel(${JSON.stringify(cacheDir)});
    model.embed('warm up');
    const loadMs = performance.now() - started;
    console.log(JSON.stringify({ loadMs, rssMB: process.memoryUsage().rss / 1e6, baseMB: base / 1e6 }));`;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  return JSON.parse(stdout);
}

/** Rows of `{ benchmark, metric, value, unit }`. */
export async function benchEmbed(): Promise<Record<string, string | number>[]> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'mnemo-bench-embed-'));
  try {
    let started = performance.now();
    await loadSifModel(cacheDir);
    const buildSeconds = (performance.now() - started) / 1000;

    const fresh = await freshProcessLoad(cacheDir);

    const embedder = createLocalEmbedder({ cacheDir });
    const texts = sentences(SENTENCES);
    await embedder.embed(texts.slice(0, BATCH));
    started = performance.now();
    for (let i = 0; i < texts.length; i += BATCH) await embedder.embed(texts.slice(i, i + BATCH));
    const perSecond = texts.length / ((performance.now() - started) / 1000);

    const row = (metric: string, value: number, unit: string) => ({
      benchmark: 'embed.local',
      metric,
      value,
      unit,
    });
    return [
      row('cold cache build (JSON to binary)', round(buildSeconds, 2), 's'),
      row('warm load in a new process', Math.round(fresh.loadMs), 'ms'),
      row('resident memory after load', Math.round(fresh.rssMB), 'MB'),
      row('resident memory before load', Math.round(fresh.baseMB), 'MB'),
      row(`throughput (${SENTENCES} sentences of 6-20 words)`, Math.round(perSecond), 'sentences/s'),
    ];
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

function round(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchEmbed());
}
