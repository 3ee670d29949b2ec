import { openSync, readSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { Request } from './pglite-thread-protocol.js';

/** What the engine's thread spent, per kind of call (`ThreadStart.trace`): benches only. */
export interface ThreadTrace {
  /**
   * Per statement (its SQL, shortened; BEGIN marked) or call: how often, CPU and wall ms in all,
   * and the wall ms its transaction waited for it (from the answer before it to its arrival).
   */
  calls: { what: string; n: number; cpuMs: number; wallMs: number; waitedMs: number }[];
  /** The thread's CPU ms in all since the last report, inside calls and outside them. */
  cpuMs: number;
  /**
   * Inside a transaction, the wall ms between the answer of one of its calls and the arrival of
   * its next: the engine held, waiting for the main thread. `gaps`: how many.
   */
  heldIdleMs: number;
  gaps: number;
  /** Wall ms from a transaction's first statement to its end's answer, in all; `transactions`: how many. */
  heldMs: number;
  transactions: number;
}

/**
 * This thread's CPU in ms (Linux: its scheduler statistics, to the nanosecond; the descriptor
 * opened here stays the opening thread's). Elsewhere: 0, and the trace says nothing of CPU.
 */
function threadCpuMs(): () => number {
  try {
    const fd = openSync('/proc/thread-self/schedstat', 'r');
    const buf = Buffer.alloc(64);
    return () => {
      const n = readSync(fd, buf, 0, buf.length, 0);
      return Number(buf.toString('latin1', 0, Math.min(n, buf.indexOf(32)))) / 1e6;
    };
  } catch {
    return () => 0;
  }
}

const label = (m: Request): string => {
  if (m.op === 'end') return m.commit ? 'COMMIT' : 'ROLLBACK';
  if (m.op !== 'query' && m.op !== 'exec') return m.op;
  const sql = m.sql.replace(/\s+/g, ' ').slice(0, 100);
  return `${m.begin ? '(BEGIN) ' : ''}${m.op === 'query' && m.end ? '(+ COMMIT) ' : ''}${sql}`;
};

/**
 * Times the engine thread's calls: each from its message's arrival to its answer's sending, in
 * the thread's CPU and in wall time, and a transaction's waits for the main thread between them.
 * Meaningful one call at a time (a bench's Recalls one after another): calls that overlap are
 * each charged the other's CPU. `profile`: a file for a V8 CPU profile of this thread between the
 * first report and the next.
 */
export function threadTrace(profile?: string) {
  const session = profile ? new Session() : null;
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session!.post(method, params, (err, r) => (err ? reject(err) : resolve(r))),
    );
  let profiling = false;
  const cpu = threadCpuMs();
  let calls = new Map<string, { n: number; cpuMs: number; wallMs: number; waitedMs: number }>();
  /** Each open transaction: when it began and when its last answer left. */
  const open = new Map<number, { began: number; answered: number | null }>();
  let zero = cpu();
  let held = { idleMs: 0, gaps: 0, ms: 0, n: 0 };
  return {
    /** A call arrived; the function returned is called once its answer is sent. */
    received(m: Request): () => void {
      const c0 = cpu();
      const t0 = performance.now();
      const tx = m.op === 'end' ? m.tx : m.op === 'query' || m.op === 'exec' ? m.tx : undefined;
      const state = tx ? open.get(tx) : undefined;
      let waited = 0;
      if (tx && !state) open.set(tx, { began: t0, answered: null });
      else if (state?.answered != null) {
        waited = t0 - state.answered;
        held.idleMs += waited;
        held.gaps++;
      }
      const what = label(m);
      return () => {
        const t1 = performance.now();
        const c = calls.get(what) ?? { n: 0, cpuMs: 0, wallMs: 0, waitedMs: 0 };
        c.n++;
        c.cpuMs += cpu() - c0;
        c.wallMs += t1 - t0;
        c.waitedMs += waited;
        calls.set(what, c);
        const s = tx ? open.get(tx) : undefined;
        if (!tx || !s) return;
        if (m.op === 'end' || (m.op === 'query' && m.end)) {
          open.delete(tx);
          held.ms += t1 - s.began;
          held.n++;
        } else s.answered = t1;
      };
    },
    /** What was measured since the last report; counting starts afresh. */
    async report(): Promise<ThreadTrace> {
      if (session && !profiling) {
        profiling = true;
        session.connect();
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: 200 });
        await post('Profiler.start');
      } else if (session) {
        const { profile: p } = (await post('Profiler.stop')) as { profile: unknown };
        writeFileSync(profile!, JSON.stringify(p));
      }
      const now = cpu();
      const out: ThreadTrace = {
        calls: [...calls].map(([what, c]) => ({ what, ...c })).sort((a, b) => b.cpuMs - a.cpuMs),
        cpuMs: now - zero,
        heldIdleMs: held.idleMs,
        gaps: held.gaps,
        heldMs: held.ms,
        transactions: held.n,
      };
      calls = new Map();
      held = { idleMs: 0, gaps: 0, ms: 0, n: 0 };
      zero = now;
      return out;
    },
  };
}
