/**
 * Loaded into the benchmark's server with `--import` (`npm run bench -- load --cpu-prof DIR`):
 * a V8 CPU profile of the whole process, written to DIR when it exits (Node refuses
 * `--cpu-prof` in NODE_OPTIONS, and the server is started by the test helpers).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.MNEMO_BENCH_CPU_PROF;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // A session of the same thread answers synchronously, so the profile is written before exit.
  process.once('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `server-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
