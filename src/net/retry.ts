/** Shared pieces of the HTTP clients' retry loops (language models, embeddings). */

const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

/** Exponential with jitter, so clients that failed together do not retry together. */
export function backoffMs(retry: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** retry, BACKOFF_CAP_MS) * (0.5 + Math.random() / 2);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
