/**
 * Doubling tests: a path that must be linear is timed on inputs of size n, 2n, 4n; each
 * doubling must at most roughly double the time. Bounds are loose so that a noisy, shared
 * 2-core machine cannot flake them, and still far from the 4× of a quadratic path: the best
 * of several runs, a floor below which times are not compared, a limit of 3× per doubling
 * (over the whole range), and one fresh measurement before failing.
 */
import assert from 'node:assert/strict';

export interface DoublingOptions {
  /** Runs per size; the fastest counts. */
  runs?: number;
  /** Times below this (ms) are treated as this: too short to compare. */
  floorMs?: number;
  /** Largest allowed growth of the time per doubling of the input. */
  maxRatio?: number;
  /**
   * What is timed: `wall` (the default) for paths that wait on another process (PostgreSQL);
   * `cpu`, this process's CPU time, for paths that compute in it: a loaded machine stretches
   * wall time by whatever else runs, not CPU time.
   */
  clock?: 'wall' | 'cpu';
}

const CLOCKS = {
  wall: () => performance.now(),
  cpu: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
};

async function timings<T>(
  sizes: number[],
  make: (n: number) => T | Promise<T>,
  run: (input: T, n: number) => unknown,
  runs: number,
  now: () => number,
): Promise<number[]> {
  const out: number[] = [];
  for (const n of sizes) {
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < runs; r++) {
      const input = await make(n);
      const started = now();
      await run(input, n);
      best = Math.min(best, now() - started);
    }
    out.push(best);
  }
  return out;
}

/**
 * The growth per doubling over the whole range (each time at least `floorMs`): the geometric
 * mean of the steps, so one noisy middle measurement cannot fail a linear path, while a
 * quadratic one still shows its 4× per doubling.
 */
function growth(times: number[], floorMs: number): number {
  const first = Math.max(times[0]!, floorMs);
  const last = Math.max(times.at(-1)!, floorMs);
  return (last / first) ** (1 / (times.length - 1));
}

/**
 * Asserts that `run` is (roughly) linear over `sizes` (each double the one before): `make(n)`
 * builds a fresh input of size n outside the timing.
 */
export async function assertLinear<T>(
  label: string,
  sizes: number[],
  make: (n: number) => T | Promise<T>,
  run: (input: T, n: number) => unknown,
  opts: DoublingOptions = {},
): Promise<number[]> {
  const { runs = 3, floorMs = 20, maxRatio = 3, clock = 'wall' } = opts;
  const now = CLOCKS[clock];
  // Warm-up: JIT and lazy tables must not count against the smallest size.
  await run(await make(sizes[0]!), sizes[0]!);
  let times = await timings(sizes, make, run, runs, now);
  if (growth(times, floorMs) >= maxRatio) times = await timings(sizes, make, run, runs, now);
  const ratio = growth(times, floorMs);
  assert.ok(
    ratio < maxRatio,
    `${label}: time grows faster than the input (sizes ${sizes.join(' / ')}: ${times.map((t) => t.toFixed(1)).join(' / ')} ms, ${ratio.toFixed(2)}× per doubling)`,
  );
  return times;
}
