import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { BudgetWait } from '../core/budgets.js';
import { AppError } from '../core/errors.js';
import { type OperationRunner, OperationWait } from '../core/operations.js';
import type { Services } from '../core/services.js';
import { BankGone, OperationLost, withinBank } from '../store/fence.js';
import { inBackground } from '../store/priority.js';
import type { ChargeBack } from '../store/store.js';
import { OPERATION_UNDONE } from '../core/operation-charges.js';
import { PayloadCache } from './payloads.js';
import { naps } from './naps.js';

export interface WorkerOptions {
  runners: Record<string, OperationRunner>;
  /** How often an idle worker looks for work. */
  pollMs?: number;
  /** How long a claim holds before another process may take the operation over. */
  leaseMs?: number;
  /** Operations run at once by this process. */
  concurrency?: number;
  /** Attempts before a transiently failing operation is marked failed. */
  maxAttempts?: number;
  /** What a failed operation of each kind gives back of its charge (default `OPERATION_UNDONE`). */
  undone?: Record<string, (payload: unknown, progress: unknown) => ChargeBack>;
}

export interface Worker {
  readonly id: string;
  /** Look for work now (after an in-process enqueue). */
  kick(): void;
  /** Stops claiming; waits for running operations to finish. */
  stop(): Promise<void>;
}

/** How often a worker deletes the export archives that expired (every bank's, one statement). */
const SWEEP_MS = 5 * 60 * 1000;

/** A 4xx AppError is the operation's own fault: retrying cannot help. */
const permanent = (err: unknown) => err instanceof AppError && err.status < 500;

/**
 * Claims operations from the database (any mnemo process may run one), runs them, renews the
 * lease while they run, and records the outcome. Operations whose worker died are taken over
 * when their lease expires.
 */
export function startWorker(s: Services, log: Logger, opts: WorkerOptions): Worker {
  const id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const pollMs = opts.pollMs ?? 500;
  const leaseMs = opts.leaseMs ?? 30_000;
  const maxAttempts = opts.maxAttempts ?? 5;
  const stopping = new AbortController();
  // Each loop's pause between polls; a kick or a stop wakes every loop asleep.
  const { nap, wakeAll } = naps();
  const running = new Set<Promise<void>>();
  const payloads = new PayloadCache(s.store);
  const undone = opts.undone ?? OPERATION_UNDONE;

  async function runOne(): Promise<boolean> {
    // The payload is read once per operation, not with every slice's claim (see PayloadCache).
    const claimed = await s.store.claimOperation(id, leaseMs, { payload: false });
    if (!claimed) return false;
    const { operation: op, projectId, progress } = claimed;
    const runner = opts.runners[op.kind];
    const done = new AbortController();
    let yielded = false;
    /**
     * A failed operation of a kind charged when queued gives back what it did not do, with the
     * transition that marks it failed (one transaction, by the lease holder only: once).
     */
    const giveBack = async (): Promise<{ giveBack?: (progress: unknown) => ChargeBack }> => {
      const of = undone[op.kind];
      if (!of) return {};
      const payload = await payloads.get(claimed);
      // From the progress its row records as it is marked: a slice that stored its memories (and
      // so its progress, in one transaction) before this failure is not given back.
      return { giveBack: (recorded) => of(payload, recorded) };
    };
    const renew = setInterval(() => {
      s.store
        .renewOperation(projectId, op.bank_id, op.id, id, leaseMs)
        .then((held) => {
          if (!held) done.abort(new Error('lease lost'));
        })
        .catch(() => {});
    }, leaseMs / 3);
    // Fenced to the incarnation of its bank it was claimed for: should the bank be deleted (and
    // created again) meanwhile, by any process, its next write fails with BankGone. So are the
    // yield that ends a slice (a slice past its deadline yields before its next write, and that
    // yield found no row and ended the job without a word), its completion and its retry, which
    // found no row either and said 'operation completed' or 'will retry'.
    const bank = claimed.bankCreatedAt;
    const fenced = <T>(fn: () => Promise<T>) =>
      bank ? withinBank({ projectId, bankId: op.bank_id, createdAt: bank }, fn) : fn();
    const ended = () =>
      log.info(
        { operation: op.id, kind: op.kind, bank: op.bank_id },
        'operation ended: its bank was deleted',
      );
    try {
      if (!runner) throw new AppError('validation_error', `unknown operation kind '${op.kind}'`);
      const signal = AbortSignal.any([stopping.signal, done.signal]);
      const payload = await payloads.get(claimed);
      const result = await fenced(() =>
        runner(s, {
          id: op.id,
          projectId,
          bankId: op.bank_id,
          kind: op.kind,
          payload,
          signal,
          progress,
          workerId: id,
        }),
      );
      // Counted already when the slice recorded them with its write.
      const created = result.recorded ? 0 : (result.memories_created ?? 0);
      if (result.more !== undefined) {
        // One slice done: back to the queue, where other banks' and projects' turns come first.
        const more = result.more;
        await fenced(() => s.store.yieldOperation(projectId, op.bank_id, op.id, id, more, created));
        yielded = true;
        return true;
      }
      if (result.stopped !== undefined) {
        await s.store.finishOperation(projectId, op.bank_id, op.id, id, {
          status: 'failed',
          memoriesCreated: created,
          error: result.stopped,
          ...(await giveBack()),
        });
        log.warn({ operation: op.id, kind: op.kind, err: result.stopped }, 'operation stopped');
        return true;
      }
      await fenced(() =>
        s.store.finishOperation(projectId, op.bank_id, op.id, id, {
          status: 'completed',
          memoriesCreated: created,
          ...(result.result_metadata ? { result: result.result_metadata } : {}),
        }),
      );
      log.info({ operation: op.id, kind: op.kind, bank: op.bank_id }, 'operation completed');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof BudgetWait || err instanceof OperationWait) {
        // The project's budget is spent, or another operation of the bank must finish first: the
        // operation waits, it has not failed.
        await s.store.deferOperation(projectId, op.bank_id, op.id, id, err.delayMs, message);
        log.info(
          {
            operation: op.id,
            kind: op.kind,
            ...(err instanceof BudgetWait && { budget: err.budget }),
            waitMs: err.delayMs,
          },
          err instanceof BudgetWait ? 'operation waits for budget' : 'operation waits its turn',
        );
      } else if (err instanceof OperationLost) {
        // Cancelled (or taken over by another worker) while its slice ran: that slice wrote
        // nothing, and the operation is no longer this worker's to mark.
        log.info({ operation: op.id, kind: op.kind, bank: op.bank_id }, 'operation ended: no longer held');
      } else if (err instanceof BankGone) {
        // Its row went with the bank: nothing is left to mark (this finds no row, as a stale
        // lease does), and nothing of it reaches a bank created since under the same id.
        await s.store.finishOperation(projectId, op.bank_id, op.id, id, { status: 'failed', error: message });
        ended();
      } else if (permanent(err) || op.attempts >= maxAttempts) {
        await s.store.finishOperation(projectId, op.bank_id, op.id, id, {
          status: 'failed',
          error: message,
          ...(await giveBack()),
        });
        log.warn({ operation: op.id, kind: op.kind, err: message }, 'operation failed');
      } else {
        const delay = Math.min(60_000, 1000 * 2 ** (op.attempts - 1));
        try {
          await fenced(() => s.store.retryOperation(projectId, op.bank_id, op.id, id, delay, message));
        } catch (gone) {
          if (!(gone instanceof BankGone)) throw gone;
          ended();
          return true;
        }
        // A lost lease (renewOperation found it no longer ours) is another holder's to retry.
        const lost = done.signal.aborted;
        log.warn(
          { operation: op.id, kind: op.kind, err: message, ...(!lost && { retryInMs: delay }) },
          lost ? 'operation stopped: its lease was lost' : 'operation will retry',
        );
      }
    } finally {
      clearInterval(renew);
      // Kept only while it goes on slice by slice; a retry or a budget wait reads it again.
      if (!yielded) payloads.drop(claimed);
    }
    return true;
  }

  let lastSweep = 0;
  async function sweep(): Promise<void> {
    if (performance.now() - lastSweep < SWEEP_MS && lastSweep > 0) return;
    lastSweep = performance.now();
    const n = await s.store.deleteExpiredArchives(s.now());
    if (n > 0) log.info({ archives: n }, 'expired export archives deleted');
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      let worked = false;
      await inBackground(sweep).catch((err: unknown) =>
        log.warn({ err }, 'deleting expired archives failed'),
      );
      try {
        // All of it background work, the claim and the bookkeeping too: on the embedded engine
        // their statements give way to requests' (store/priority.ts), as the run's own do.
        worked = await inBackground(runOne);
      } catch (err) {
        log.error({ err }, 'worker could not claim work');
      }
      // Sockets and timers get a turn between two slices of background work.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!worked && !stopping.signal.aborted) {
        await nap(pollMs);
      }
    }
  }

  for (let i = 0; i < (opts.concurrency ?? 1); i++) {
    const p = loop();
    running.add(p);
    p.finally(() => running.delete(p));
  }
  return {
    id,
    kick: wakeAll,
    async stop() {
      stopping.abort();
      wakeAll();
      await Promise.allSettled([...running]);
    },
  };
}
