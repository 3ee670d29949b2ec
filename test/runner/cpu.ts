/**
 * Preloaded into every test process by `test/run.ts`: when the file's process exits, appends
 * `{kind: 'cpu', file, ms, wallMs}` (user + system CPU time of the whole process: loading modules,
 * hooks and tests; and how long the process lived) to MNEMO_TEST_CPU_LOG. On a shared machine wall time says more about the
 * neighbours than about the test; CPU time is what the file costs.
 */
import { appendFileSync } from 'node:fs';

const log = process.env.MNEMO_TEST_CPU_LOG;
const file = process.argv[1];
if (log && file) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(
      log,
      `${JSON.stringify({ kind: 'cpu', file, ms: (user + system) / 1000, wallMs: Math.round(process.uptime() * 1000) })}\n`,
    );
  });
}
