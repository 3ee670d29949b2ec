/**
 * One fast-tier worker process (see `queue.ts`): takes a test file from the queue, runs it as a
 * suite named by its path, and when that suite has finished (its last `after` hook) takes the
 * next, until the queue is empty. A file's tests are its suite's subtests, so its `before`,
 * `after`, `beforeEach` and `afterEach` hooks, even top-level ones, apply to its own tests only,
 * and reports name the file they come from. Files run one after another, never interleaved.
 *
 * For each file it appends `{kind: 'cpu-file', file, ms, wallMs, idleMs}` to MNEMO_TEST_CPU_LOG:
 * the process's CPU time from importing the file to its suite's end, which `test/run.ts` reports
 * and keeps to order the next run's queue; the wall time; and how long the event loop sat
 * waiting (timers, sockets, child processes) meanwhile. The idle time is the file's waits, which
 * hold the worker without using it; on a loaded machine the wall time is mostly the neighbours'.
 */
import { AsyncResource } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { takeNext } from './queue.js';

const queue = process.env.MNEMO_TEST_QUEUE;
if (!queue)
  throw new Error('MNEMO_TEST_QUEUE is not set: test/runner/worker.ts is started by test/run.ts --fast');
const log = process.env.MNEMO_TEST_CPU_LOG;

/**
 * node:test nests a suite in the test whose async context registers it: the next file's suite
 * is registered from the previous one's `after` hook, so it is registered at the root's.
 */
const atRoot = AsyncResource.bind((register: () => void) => register());

function runNext(): void {
  const file = takeNext(queue!);
  if (file === undefined) return;
  atRoot(() =>
    describe(relative(process.cwd(), file), async () => {
      process.env.MNEMO_TEST_FILE = file; // for the watchdog's message (timeouts.ts)
      const start = process.cpuUsage();
      const loop = performance.eventLoopUtilization();
      const wallStart = performance.now();
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        const { user, system } = process.cpuUsage(start);
        const wallMs = Math.round(performance.now() - wallStart);
        const idleMs = Math.round(performance.eventLoopUtilization(loop).idle);
        if (log)
          appendFileSync(
            log,
            `${JSON.stringify({ kind: 'cpu-file', file, ms: (user + system) / 1000, wallMs, idleMs })}\n`,
          );
        runNext();
      };
      try {
        await import(pathToFileURL(file).href);
      } catch (err) {
        finish(); // the file fails to load: its suite fails with the error, the next one runs
        throw err;
      }
      // Registered after the file's own hooks, so it runs after them.
      after(finish);
    }),
  );
}

/**
 * Loads once what every worker pays for a single time: the service's modules (the language
 * libraries of retain and recall among them), the embedded engine and a first database (kept by
 * the pool for the first test that asks). Done before the first file, so that each file's CPU
 * is its own: a start-up charged to whichever file ran first (5-7 s of CPU on a 2-core machine)
 * made that file look the costliest, which kept it first at the next run's queue. Counted in the
 * summary as starting the workers.
 */
async function warmUp(): Promise<void> {
  await import('../helpers/app.js');
  const { openTestDb } = await import('../helpers/engines.js');
  await (await openTestDb('pglite')).dispose();
}

await warmUp();
runNext();
