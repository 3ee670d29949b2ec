/**
 * The fast tier's shared queue of test files. `test/run.ts --fast` starts one worker process
 * per core (`worker.ts`) instead of one process per file, and the workers take files from this
 * queue until it is empty, so a file's process start-up, module loading (the app, PGlite,
 * text analysis) and JIT warm-up are paid once per worker instead of once per file, and the
 * processes stay busy to the end however uneven the files are.
 *
 * The queue is a directory of one small file per test file, named by its place in the order
 * (costliest first by the last measured CPU time, so no long file is left to run alone at the
 * end); a worker claims an entry by renaming it, which only one process can do.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes the queue: `files` in the order given. */
export function fillQueue(dir: string, files: string[]): void {
  mkdirSync(join(dir, 'waiting'), { recursive: true });
  mkdirSync(join(dir, 'taken'), { recursive: true });
  files.forEach((file, i) => {
    writeFileSync(join(dir, 'waiting', String(i).padStart(5, '0')), file);
  });
}

/** Takes the next file, or undefined when none is left. Safe between processes. */
export function takeNext(dir: string): string | undefined {
  for (const name of readdirSync(join(dir, 'waiting')).sort()) {
    const taken = join(dir, 'taken', `${name}.${process.pid}`);
    try {
      renameSync(join(dir, 'waiting', name), taken);
    } catch {
      continue; // another worker took it first
    }
    return readFileSync(taken, 'utf8');
  }
  return undefined;
}

/**
 * Costliest first by the CPU time last measured for each file (`history`, milliseconds); files
 * never measured go first, as they may be the costliest. Ties keep the given order.
 */
export function costliestFirst(files: string[], history: Record<string, number>): string[] {
  const cost = (f: string) => history[f] ?? Number.POSITIVE_INFINITY;
  return files
    .map((f, i) => ({ f, i }))
    .sort((a, b) => cost(b.f) - cost(a.f) || a.i - b.i)
    .map(({ f }) => f);
}
