/**
 * A node:test reporter for `test/run.ts`: one JSON line per skipped test or suite
 * `{kind: 'skip', file, name, reason}` and per top-level test `{kind: 'time', file, ms}`, so
 * the summary can say what did not run and which files are slow. Plain JavaScript: node
 * loads reporters before tsx's loader is registered.
 *
 * In a fast-tier worker (test/runner/worker.ts) the top-level tests are the files' suites,
 * each named by its file's path: their time is the file's.
 */
import { resolve } from 'node:path';

/** Where the worker declares the files' suites: their location. */
const WORKER = /test[\\/]runner[\\/]worker\.ts$/;

export default async function* skips(source) {
  for await (const { type, data } of source) {
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    if (data.skip !== undefined && data.skip !== false) {
      const reason = data.skip === true ? '' : String(data.skip);
      yield `${JSON.stringify({ kind: 'skip', file: data.file, name: data.name, reason })}\n`;
    } else if (data.nesting === 0 && data.file) {
      const file = WORKER.test(data.file) ? resolve(data.name) : data.file;
      yield `${JSON.stringify({ kind: 'time', file, ms: data.details?.duration_ms ?? 0 })}\n`;
    }
  }
}
