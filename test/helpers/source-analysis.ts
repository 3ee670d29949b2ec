/**
 * What a test reads from source files with the TypeScript parser (imports, SQL statements,
 * declarations), kept on disk by the text read and the code that reads it. Parsing the ~350
 * files of `src/` costs ~1.5 s of CPU in a fresh process, as much again as the checks of the
 * layers, cycles and statements themselves; their inputs change a few files at a time.
 *
 * An analysis is named with the modules its result depends on (`code`): a result is looked up
 * by a digest of the file's path and text, of those modules' sources and of the TypeScript
 * version, so an edit to any of them reads the file again. TypeScript itself is loaded only
 * when something must be parsed. The cache lives in `node_modules/.cache/mnemo/` (one file per
 * analysis, written when the process exits); MNEMO_TEST_SOURCE_CACHE=0 parses everything.
 * `read` gets the compiler API by calling `typescript()`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const DIR = join(ROOT, 'node_modules/.cache/mnemo/source-analysis');
/** Beyond this many results an analysis's file starts afresh (old texts pile up as files change). */
const MAX_ENTRIES = 20_000;

const require = createRequire(import.meta.url);
let loaded: typeof ts | undefined;
/** The TypeScript compiler API, loaded on first use. */
export const typescript = (): typeof ts => (loaded ??= require('typescript') as typeof ts);

const digest = (...parts: string[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex');
};

interface Saved {
  salt: string;
  results: Record<string, unknown>;
}

/**
 * An analysis named `name` whose results depend on the modules `code` (file URLs or paths, e.g.
 * `import.meta.url`; this module is always among them). Returns `analyse(path, text, read)`:
 * `read()`'s result for that text, from the cache or computed (and then kept). Results must
 * be plain JSON; each call returns its own copy. `onDisk: false` keeps them in this process only.
 */
export function sourceAnalysis<T>(
  name: string,
  code: string[],
  { onDisk = true } = {},
): (path: string, text: string, read: () => T) => T {
  const off = process.env.MNEMO_TEST_SOURCE_CACHE === '0';
  const disk = onDisk && !off;
  const sources = [import.meta.url, ...code].map((c) =>
    readFileSync(c.startsWith('file:') ? fileURLToPath(c) : c, 'utf8'),
  );
  const tsVersion = (require('typescript/package.json') as { version: string }).version;
  const salt = digest(tsVersion, ...sources);
  const file = join(DIR, `${name}.json`);
  const saved = disk ? readSaved(file) : undefined;
  const results: Record<string, unknown> = saved?.salt === salt ? saved.results : {};
  let added = false;
  if (disk)
    process.on('exit', () => {
      if (!added) return;
      // Another process may have saved results of its own since: kept, unless they are of other code.
      const now = readSaved(file);
      const merged = now?.salt === salt ? { ...now.results, ...results } : results;
      const kept = Object.keys(merged).length > MAX_ENTRIES ? results : merged;
      mkdirSync(dirname(file), { recursive: true });
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, JSON.stringify({ salt, results: kept } satisfies Saved));
      renameSync(partial, file);
    });
  return (path, text, read) => {
    const key = digest(path, text);
    let result = results[key] as T | undefined;
    if (result === undefined) {
      result = read();
      if (off) return result;
      results[key] = result;
      added = true;
    }
    return structuredClone(result);
  };
}

function readSaved(file: string): Saved | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Saved;
  } catch {
    return undefined; // none yet, or written by a process that was stopped
  }
}
