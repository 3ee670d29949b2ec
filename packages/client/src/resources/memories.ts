import { ACTIONS } from '../../../../src/contract/actions.js';
import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  AsyncRetainResponse,
  DeletedMemory,
  ListMemoriesParams,
  Memory,
  RecallParams,
  RecallResponse,
  RetainParams,
  RetainResponse,
} from '../types.js';
import { bankPath } from './paths.js';

/** Retain, Recall, list and delete memories of a bank. */
export class MemoriesResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** Stores items in the bank (created on first use). With `async: true` it queues an operation. */
  retain(
    bank: string,
    params: RetainParams & { async: true },
    options?: RequestOptions,
  ): Promise<AsyncRetainResponse>;
  retain(
    bank: string,
    params: RetainParams & { async?: false },
    options?: RequestOptions,
  ): Promise<RetainResponse>;
  retain(
    bank: string,
    params: RetainParams,
    options?: RequestOptions,
  ): Promise<RetainResponse | AsyncRetainResponse>;
  retain(bank: string, params: RetainParams, options?: RequestOptions) {
    const { space, ...body } = params;
    return this.t.request('POST', bankPath(this.prefix, bank, '/memories'), {
      query: { space },
      body,
      options,
    });
  }

  /** Hybrid retrieval cut to a token budget; a string is taken as the query. */
  recall(bank: string, params: RecallParams | string, options?: RequestOptions): Promise<RecallResponse> {
    const body = typeof params === 'string' ? { query: params } : params;
    return this.t.request('POST', bankPath(this.prefix, bank, '/memories/recall'), {
      body,
      options,
      read: ACTIONS['memories.recall'].read,
    });
  }

  /** The bank's memories, newest first: `await` for one page, `for await` for all of them. */
  list(bank: string, params: ListMemoriesParams = {}, options?: RequestOptions): PagedList<Memory> {
    const { cursor, ...filters } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<Memory>>('GET', bankPath(this.prefix, bank, '/memories'), {
          query: { ...filters, cursor: c },
          options,
        }),
      cursor,
    );
  }

  /** Deletes one memory (404 when it does not exist). */
  delete(bank: string, id: string, options?: RequestOptions): Promise<DeletedMemory> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/memories/${encodeURIComponent(id)}`), {
      options,
    });
  }
}
