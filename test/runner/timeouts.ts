/**
 * Preloaded into every test process by `test/run.ts`: a watchdog, so a bug shows as a failure
 * instead of a hang (a test that waited forever once held the suite for 15+ minutes).
 *
 * Each test, and each stretch between two tests (hooks, module set-up), gets MNEMO_TEST_TIMEOUT
 * milliseconds (default 300 s, 600 s in `*.slow.test.ts`; 0 turns it off). When one runs over, the file's process prints
 * which test was running and exits with code 1, so the file fails and the rest of the suite
 * goes on. Node 20's own `--test-timeout` bounds a whole file, not a test, and wrapping
 * `test()` would make node report the wrapper as every test's location; root-level
 * `beforeEach`/`afterEach` hooks see every test without either problem.
 *
 * The stress and fuzz suites bound themselves (`describe(..., { timeout })`, up to an hour):
 * they get 60 minutes here, and `npm run soak` (MNEMO_SOAK=1) turns the watchdog off.
 */
import { afterEach, beforeEach } from 'node:test';

const file = process.argv[1] ?? '';
const selfBounded = /[\\/]test[\\/](stress|fuzz)[\\/]/.test(file);
const slowFile = file.endsWith('.slow.test.ts');
/** A test on a busy shared machine (load 20 on 2 cores) took up to 90 s, a doubling test 250 s. */
const LIMIT_MS = process.env.MNEMO_SOAK
  ? 0
  : Number(process.env.MNEMO_TEST_TIMEOUT ?? (selfBounded ? 3_600_000 : slowFile ? 600_000 : 300_000));

let timer: NodeJS.Timeout | undefined;

function arm(what: string, ms: number): void {
  clearTimeout(timer);
  timer = setTimeout(() => {
    // A fast-tier worker (test/runner/worker.ts) names the file it is running.
    const current = process.env.MNEMO_TEST_FILE ?? file;
    process.stderr.write(
      `\n✖ TIMEOUT: ${what} ran over ${Math.round(ms / 1000)} s (MNEMO_TEST_TIMEOUT) — stopping ${current}\n`,
    );
    process.exit(1);
  }, ms).unref();
}

if (LIMIT_MS > 0) {
  arm("loading the file or a suite's set-up (before hooks)", LIMIT_MS);
  beforeEach((t) => {
    arm(`test "${t.name}"`, LIMIT_MS);
  });
  afterEach((t) => {
    arm(`the set-up or tear-down after test "${t.name}"`, LIMIT_MS);
  });
}
