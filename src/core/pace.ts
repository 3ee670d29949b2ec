/** How long a loop of synchronous steps may go on before it lets the event loop take a turn. */
const TURN_MS = 20;

/**
 * For long loops on the request or job path (one Retain's items, say): `await pace()` once per
 * step gives the event loop a turn (sockets, timers, /health, other tenants' requests) whenever
 * TURN_MS have passed since the last, so no run of steps holds it much longer than that.
 * Awaiting a resolved promise does not: only a macrotask (setImmediate) lets I/O in.
 */
export function pacer(ms = TURN_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < ms) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
