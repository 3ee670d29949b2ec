import { APIUserAbortError, MnemoError } from '../errors.js';
import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type { ListOperationsParams, Operation } from '../types.js';
import { bankPath, seg } from './paths.js';

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** Background operations of a bank (async Retain and other durable work). */
export class OperationsResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  get(bank: string, id: string, options?: RequestOptions): Promise<Operation> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/operations/${seg(id)}`), { options });
  }

  /** The bank's operations, newest first, optionally of one status. */
  list(bank: string, params: ListOperationsParams = {}, options?: RequestOptions): PagedList<Operation> {
    const { cursor, ...filters } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<Operation>>('GET', bankPath(this.prefix, bank, '/operations'), {
          query: { ...filters, cursor: c },
          options,
        }),
      cursor,
    );
  }

  /** Cancels a pending operation (409 once it runs or has finished). */
  cancel(bank: string, id: string, options?: RequestOptions): Promise<Operation> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/operations/${seg(id)}`), { options });
  }

  /** Queues a failed operation again, from the progress it had recorded (409 in any other state). */
  retry(bank: string, id: string, options?: RequestOptions): Promise<Operation> {
    return this.t.request('POST', bankPath(this.prefix, bank, `/operations/${seg(id)}/retry`), { options });
  }

  /** Deletes the record of a completed, failed or cancelled operation (409 while it is pending or running). */
  delete(
    bank: string,
    id: string,
    options?: RequestOptions,
  ): Promise<{ success: true; operation_id: string }> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/operations/${seg(id)}/delete`), {
      options,
    });
  }

  /**
   * Polls until the operation is completed, failed or cancelled and returns it. `timeout` (ms,
   * default 5 minutes) bounds the whole wait; `signal` aborts it.
   */
  async wait(
    bank: string,
    id: string,
    opts: { interval?: number; timeout?: number; signal?: AbortSignal } = {},
  ): Promise<Operation> {
    const interval = opts.interval ?? 250;
    const deadline = Date.now() + (opts.timeout ?? 300_000);
    for (;;) {
      const op = await this.get(bank, id, { signal: opts.signal });
      if (FINISHED.has(op.status)) return op;
      if (Date.now() + interval > deadline) {
        throw new MnemoError(`operation ${id} is still ${op.status} after waiting`, { code: 'timeout' });
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
      if (opts.signal?.aborted) throw new APIUserAbortError('wait aborted');
    }
  }
}
