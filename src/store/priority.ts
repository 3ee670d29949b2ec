import { AsyncLocalStorage } from 'node:async_hooks';

const background = new AsyncLocalStorage<true>();

/**
 * Runs `fn` as background work (the worker's operations: consolidation, async Retain,
 * re-embedding). On the embedded engine, which runs one statement at a time for everyone, its
 * statements give way to requests' (see `priorityGate`); PostgreSQL runs them side by side.
 */
export const inBackground = <T>(fn: () => Promise<T>): Promise<T> => background.run(true, fn);

/** How long the foreground must have been quiet before a background statement starts. */
const QUIET_MS = 3;
/** The longest a background statement waits: under constant load it still moves on. */
const MAX_WAIT_MS = 100;

/**
 * Orders statements on an engine that runs one at a time: a background statement (or
 * transaction) starts only once no request statement has been in flight for QUIET_MS, or after
 * MAX_WAIT_MS, so a long consolidation costs requests at most one background statement per
 * MAX_WAIT_MS instead of making them queue behind it. Statements inside a transaction are not
 * gated: the transaction already holds the engine.
 */
export function priorityGate(): <T>(fn: () => Promise<T>) => Promise<T> {
  let inFlight = 0;
  let lastDone = 0;
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (background.getStore()) {
      // The embedded engine runs in this thread and its statements settle without a trip
      // through the event loop: a background loop that never yields would starve the server
      // of its sockets and timers. Let pending I/O in first, always.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const deadline = Date.now() + MAX_WAIT_MS;
      for (;;) {
        const now = Date.now();
        const quietFor = now - lastDone;
        if ((inFlight === 0 && quietFor >= QUIET_MS) || now >= deadline) break;
        await sleep(Math.min(deadline - now, inFlight === 0 ? QUIET_MS - quietFor : QUIET_MS));
      }
      return fn();
    }
    inFlight++;
    try {
      return await fn();
    } finally {
      inFlight--;
      lastDone = Date.now();
    }
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, ms)));
