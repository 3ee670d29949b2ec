/** Limits how many tasks run at once; waiting tasks start first come, first served. */
export class Semaphore {
  #available: number;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    if (!(limit >= 1)) throw new RangeError(`concurrency must be at least 1, got ${limit}`);
    this.#available = Math.floor(limit);
  }

  /** Runs `task` once a slot is free. Aborting `signal` while waiting gives up the place in line. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#available > 0) {
      this.#available--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(grant);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason);
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    // Handing the slot straight to the next waiter keeps a newcomer from overtaking it.
    if (next) next();
    else this.#available++;
  }
}
