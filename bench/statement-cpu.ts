/**
 * Times every exchange with the embedded engine in this process: PGlite runs each one
 * synchronously on the event loop (`execProtocolRawSync`), so the CPU the main thread spends in
 * it is how long it held the loop. Each exchange is named by the SQL it runs (the text of its Parse or
 * Query message, or of the prepared statement its Bind names). Also records garbage collection
 * pauses, the other thing that holds the loop without being a statement. For benches only.
 */
import { openSync, readSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';

/**
 * CPU milliseconds of this process's main thread, the one that runs the event loop (Linux:
 * its scheduler statistics, ~7 µs a read). The process's CPU (`process.cpuUsage`) also counts
 * the garbage collector's and libuv's other threads, which run beside the loop, not in it: with
 * them a statement's figure varied by tens of ms between runs. Elsewhere, the process's CPU.
 */
export const mainThreadCpuMs: () => number = (() => {
  try {
    const fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
    const buf = Buffer.alloc(64);
    return () => {
      const n = readSync(fd, buf, 0, buf.length, 0);
      return Number(buf.toString('latin1', 0, Math.min(n, buf.indexOf(32)))) / 1e6;
    };
  } catch {
    return () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
  }
})();

export interface StatementCpu {
  /** Exchanges timed. */
  statements: number;
  over30Ms: number;
  over50Ms: number;
  /** Exchanges over 50 ms of the process's CPU (all its threads), the figure this bench gave before. */
  over50MsProcess: number;
  /** The slowest exchanges, slowest first: CPU ms and the first characters of their SQL. */
  worst: { cpuMs: number; sql: string }[];
  /** Garbage collection pauses over 50 ms (wall), and the longest. */
  gcOver50Ms: number;
  gcMaxMs: number;
}

const decoder = new TextDecoder();

/** node:perf_hooks' garbage collection kinds. */
const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };

/** The NUL-terminated string at `at`, and where the next field starts. */
function cstring(b: Uint8Array, at: number): [string, number] {
  const end = b.indexOf(0, at);
  return [decoder.decode(b.subarray(at, end)), end + 1];
}

/** Names an exchange by its SQL, remembering the text of each statement it parses. */
function namer() {
  const byName = new Map<string, string>();
  return (msg: Uint8Array): string => {
    const type = String.fromCharCode(msg[0] ?? 0);
    if (type === 'Q') return cstring(msg, 5)[0];
    if (type === 'P') {
      const [name, at] = cstring(msg, 5);
      const [text] = cstring(msg, at);
      byName.set(name, text);
      return text;
    }
    if (type === 'B') {
      const [, at] = cstring(msg, 5);
      return byName.get(cstring(msg, at)[0]) ?? '(bind)';
    }
    if (type === 'D' && msg[5] === 'S'.charCodeAt(0)) return byName.get(cstring(msg, 6)[0]) ?? '(describe)';
    return byName.get('') ?? `(${type})`;
  };
}

/**
 * Installs the timer (before the engine opens, so that it sees every statement prepared);
 * `begin` starts counting, `stop` restores PGlite and returns the figures.
 */
export function statementCpu(keep = 8) {
  const proto = PGlite.prototype as unknown as { execProtocolRawSync(m: Uint8Array): Uint8Array };
  const original = proto.execProtocolRawSync;
  const name = namer();
  const times: number[] = [];
  const processTimes: number[] = [];
  // The latest exchanges and pauses, by when they ended, to say what a long step was made of.
  const recent: { end: number; cpuMs: number; sql: string }[] = [];
  const pauses: { start: number; end: number; kind: number }[] = [];
  const trim = <T>(xs: T[]) => xs.length > 2000 && xs.splice(0, 1000);
  const worst: { cpuMs: number; sql: string }[] = [];
  const bySql = new Map<string, { n: number; cpuMs: number }>();
  let counting = false;
  proto.execProtocolRawSync = function (this: unknown, msg: Uint8Array) {
    const sql = name(msg);
    if (!counting) return original.call(this, msg);
    const t0 = mainThreadCpuMs();
    const p0 = process.cpuUsage();
    try {
      return original.call(this, msg);
    } finally {
      const ms = mainThreadCpuMs() - t0;
      const p = process.cpuUsage(p0);
      times.push(ms);
      processTimes.push((p.user + p.system) / 1000);
      const total = bySql.get(sql) ?? { n: 0, cpuMs: 0 };
      total.n++;
      total.cpuMs += ms;
      bySql.set(sql, total);
      recent.push({ end: performance.now(), cpuMs: ms, sql });
      trim(recent);
      if (worst.length < keep || ms > worst[worst.length - 1]!.cpuMs) {
        worst.push({ cpuMs: Math.round(ms), sql: sql.replace(/\s+/g, ' ').slice(0, 90) });
        worst.sort((a, b) => b.cpuMs - a.cpuMs);
        worst.length = Math.min(worst.length, keep);
      }
    }
  };
  const gc: number[] = [];
  const obs = new PerformanceObserver((list) => {
    if (!counting) return;
    for (const e of list.getEntries()) {
      gc.push(e.duration);
      const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0;
      pauses.push({ start: e.startTime, end: e.startTime + e.duration, kind });
      trim(pauses);
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    begin() {
      counting = true;
    },
    /** Pauses counting (`begin` resumes it). */
    pause() {
      counting = false;
    },
    /** Every exchange's SQL with how often it ran and its main-thread CPU in all, costliest first. */
    totals(): { sql: string; n: number; cpuMs: number }[] {
      return [...bySql].map(([sql, t]) => ({ sql, ...t })).sort((a, b) => b.cpuMs - a.cpuMs);
    },
    /**
     * What ran between two instants (performance.now()): the CPU of the exchanges that ended
     * in it, the slowest named, and the wall time of the garbage collection pauses in it.
     */
    explain(from: number, to: number): string {
      const st = recent.filter((r) => r.end >= from && r.end <= to);
      const gcs = pauses.filter((g) => g.end >= from && g.start <= to);
      const cpu = st.reduce((n, r) => n + r.cpuMs, 0);
      const slowest = [...st].sort((a, b) => b.cpuMs - a.cpuMs).slice(0, 2);
      const kinds = [...new Set(gcs.map((g) => GC_KINDS[g.kind] ?? g.kind))].join('+');
      const gcMs = gcs.reduce((n, g) => n + g.end - g.start, 0);
      return (
        `${st.length} exchanges ${Math.round(cpu)} ms CPU` +
        slowest
          .map((r) => ` [${Math.round(r.cpuMs)} ms ${r.sql.replace(/\s+/g, ' ').slice(0, 60)}]`)
          .join('') +
        (gcs.length ? `; GC ${kinds} ${Math.round(gcMs)} ms wall` : '')
      );
    },
    stop(): StatementCpu {
      proto.execProtocolRawSync = original;
      obs.disconnect();
      return {
        statements: times.length,
        over30Ms: times.filter((t) => t > 30).length,
        over50Ms: times.filter((t) => t > 50).length,
        over50MsProcess: processTimes.filter((t) => t > 50).length,
        worst,
        gcOver50Ms: gc.filter((t) => t > 50).length,
        gcMaxMs: Math.round(Math.max(0, ...gc)),
      };
    },
  };
}
