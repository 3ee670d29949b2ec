import { AsyncLocalStorage } from 'node:async_hooks';
import { breathe } from './breathe.js';

const background = new AsyncLocalStorage<true>();

/**
 * Runs `fn` as background work (the worker's operations: consolidation, async Retain,
 * re-embedding). On the embedded engine, which runs one statement at a time for everyone, its
 * statements give way to requests' (see `priorityGate`); PostgreSQL runs them side by side.
 */
export const inBackground = <T>(fn: () => Promise<T>): Promise<T> => background.run(true, fn);

/** Whether the caller runs as background work (`inBackground`). */
export const isBackground = (): boolean => background.getStore() === true;

/** How long the foreground must have been quiet before a background statement starts. */
const QUIET_MS = 3;
/** The longest a background statement waits: under constant load it still moves on. */
const MAX_WAIT_MS = 100;
/** How long request statements may go on starting in one turn of the event loop. */
const SLICE_MS = 2;

/**
 * Orders statements on an engine that runs one at a time, in this thread.
 *
 * Request statements (and transactions) run in the order they came; those that start within
 * SLICE_MS of a turn of the event loop run in it, the rest wait for the next turn. The embedded
 * engine's statements settle without a trip through the event loop, so without these turns
 * queued statements ran back to back in one chain of promise callbacks while no socket was read
 * and no timer ran (200 queued statements: 400 ms). And Node accepts one new connection per
 * turn: under 64 concurrent Recalls a new connection waited up to 15 s to be accepted while the
 * others were served (docs/deploy.md).
 *
 * A background statement (or transaction) starts only once no request statement has been in
 * flight for QUIET_MS, or after MAX_WAIT_MS, so a long consolidation costs requests at most one
 * background statement per MAX_WAIT_MS instead of making them queue behind it. Statements inside
 * a transaction are not gated: the transaction already holds the engine.
 *
 * `serial: false`: request statements start at once, side by side (counted only, so that a
 * background statement still waits for their quiet): for the engine on its own thread, whose
 * own gate orders them (`pglite-thread.ts`).
 */
export function priorityGate(opts: { serial?: boolean } = {}): <T>(fn: () => Promise<T>) => Promise<T> {
  const serial = opts.serial ?? true;
  let inFlight = 0;
  let lastDone = 0;
  let queue: Promise<unknown> = Promise.resolve();
  let turnStarted = 0;
  /** A statement runs in this turn of the event loop if the turn is young, else in the next. */
  const nextSlot = async () => {
    if (performance.now() - turnStarted < SLICE_MS) return;
    await breathe();
    turnStarted = performance.now();
  };
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (background.getStore()) {
      await breathe();
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
    const run = serial ? queue.then(nextSlot).then(fn) : fn();
    if (serial) queue = run.catch(() => {});
    try {
      return await run;
    } finally {
      inFlight--;
      lastDone = Date.now();
    }
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, ms)));
