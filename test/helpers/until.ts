/**
 * Polls `fn` until `ok` holds, for asynchronous outcomes such as operations. `ms` only bounds a
 * wait that is never going to end (it throws with the last value): it is not a speed check, so by
 * default it is well past what a slow state change takes on a loaded machine (operations took
 * over 20 s of wall time under load 20 on 2 cores) and under the watchdog's 300 s per test, so a
 * stuck wait still names its last value.
 */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 240_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
