/**
 * The pause of a polling loop that found no work: `pollMs` at most, cut short for every loop
 * asleep at once by `wakeAll` (new work was queued, or the loops are stopping).
 */
export function naps(): { nap(ms: number): Promise<void>; wakeAll(): void } {
  const sleepers = new Set<() => void>();
  return {
    nap: (ms) =>
      new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        sleepers.add(wake);
      }),
    wakeAll: () => {
      for (const wake of [...sleepers]) wake();
    },
  };
}
