/**
 * The order of the whole suite (`npm test`). Node's test runner starts the files in the order
 * it is given them, two at a time on a 2-core machine, so a costly file started late runs on
 * alone at the end while the other core idles. `test/run.ts` starts the costliest first, by a
 * small committed table (`costs.json`: seconds per file in the last whole run on both engines:
 * a slow-tier file's process's wall time, a fast-tier file's CPU time in its worker; the two
 * kinds are only ever compared among themselves), so the order is the same on a clean clone,
 * which has no history of its own.
 * A file the table does not know goes first when it is in the slow tier (it may be costly) and
 * last otherwise.
 *
 * Regenerate the table after a whole run on both engines that kept its CPU log:
 *   MNEMO_TEST_CPU_LOG=/tmp/cpu.jsonl npm test && npx tsx test/runner/costs.ts /tmp/cpu.jsonl
 * (a run elsewhere, e.g. CI's clean clone: add the directory it ran in as a second argument).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { costliestFirst } from './queue.js';
import { isSlow } from './tiers.js';

const TABLE = fileURLToPath(new URL('./costs.json', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The committed table: path from the repository's root -> seconds. */
export function readCosts(table = TABLE): Record<string, number> {
  try {
    return JSON.parse(readFileSync(table, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * `files` (paths from the repository's root) costliest first by `costs`; unknown slow-tier files
 * before every known file, unknown fast-tier files after them; ties keep the given order.
 */
export function costliestFirstByTable(files: string[], costs: Record<string, number>): string[] {
  const known: Record<string, number> = {};
  for (const f of files) {
    const key = f.replaceAll('\\', '/');
    const cost = costs[key];
    if (cost !== undefined) known[f] = cost;
    else if (!isSlow(key)) known[f] = -1;
  }
  return costliestFirst(files, known);
}

/**
 * The table from a CPU log of `test/run.ts` (`{kind: 'cpu', file, ms, wallMs}` for a file in a
 * process of its own, written by `cpu.ts`; `{kind: 'cpu-file', file, ms}` for a file in a worker,
 * by `worker.ts`): the wall time of each file's process in seconds, or its CPU time where a line
 * has no wall time (the longest, when the log holds several runs).
 */
export function costsFromCpuLog(text: string, root = ROOT): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const l = JSON.parse(line) as { kind: string; file: string; ms: number; wallMs?: number };
    if (/mnemo-test-worker-\d+\.mjs$/.test(l.file)) continue;
    const key = relative(root, resolve(root, l.file)).replaceAll('\\', '/');
    const seconds = Math.max(1, Math.round((l.wallMs ?? l.ms) / 1000));
    out[key] = Math.max(out[key] ?? 0, seconds);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [log, ranIn] = process.argv.slice(2);
  if (!log) {
    process.stderr.write(
      'usage: npx tsx test/runner/costs.ts <cpu log of a whole npm test run> [the directory it ran in]\n',
    );
    process.exit(2);
  }
  const table = costsFromCpuLog(readFileSync(log, 'utf8'), ranIn ? resolve(ranIn) : ROOT);
  writeFileSync(TABLE, `${JSON.stringify(table, null, 2)}\n`);
  process.stdout.write(`${Object.keys(table).length} files written to ${relative(process.cwd(), TABLE)}\n`);
}
