import { ACTIONS } from '../../../../src/contract/actions.js';
import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  AsyncRetainResponse,
  ClearedMemoryObservations,
  DeletedMemory,
  DryRunExtractParams,
  DryRunExtractResult,
  FileMetadata,
  FileRetainResponse,
  MemoryGraph,
  MemoryGraphParams,
  MemoryHistory,
  ListMemoriesParams,
  Memory,
  RecallParams,
  RecallResponse,
  RetainParams,
  RetainResponse,
  UpdateMemoryParams,
} from '../types.js';
import { bankPath, seg } from './paths.js';

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

  /**
   * Uploads files (plain text, Markdown, HTML, PDF) and retains each one's text as a document,
   * one queued operation per file; `filesMetadata` gives each file (in order) its document id,
   * context, tags, metadata or timestamp.
   */
  retainFiles(
    bank: string,
    files: (File | Blob)[],
    params: { filesMetadata?: FileMetadata[]; space?: string } = {},
    options?: RequestOptions,
  ): Promise<FileRetainResponse> {
    const form = new FormData();
    for (const f of files) form.append('files', f);
    if (params.filesMetadata)
      form.append('request', JSON.stringify({ files_metadata: params.filesMetadata }));
    return this.t.request('POST', bankPath(this.prefix, bank, '/files/retain'), {
      query: { space: params.space },
      body: form,
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
  /** One memory with its entities and tags. */
  get(bank: string, id: string, options?: RequestOptions): Promise<Memory> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/memories/${seg(id)}`), { options });
  }

  /** What is known of a memory's past: retained or consolidated, its sources, the observations it went into. */
  history(bank: string, id: string, options?: RequestOptions): Promise<MemoryHistory> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/memories/${seg(id)}/history`), { options });
  }

  /** The newest memories matching the filter and the links among them. Needs `graph:read`. */
  graph(bank: string, params: MemoryGraphParams = {}, options?: RequestOptions): Promise<MemoryGraph> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/graph'), { query: params, options });
  }

  /** Retain's extraction on one item, with the bank's settings or tried ones; stores nothing. */
  dryRunExtract(
    bank: string,
    params: DryRunExtractParams,
    options?: RequestOptions,
  ): Promise<DryRunExtractResult> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/memories/dry-run-extract'), {
      body: params,
      options,
      read: ACTIONS['memories.extract'].read,
    });
  }

  /**
   * Curates one memory: `state: 'invalidated'` (with a `reason`) retires it from Recall, Reflect
   * and consolidation, `'valid'` restores it; `text` and the other fields edit it.
   */
  update(bank: string, id: string, params: UpdateMemoryParams, options?: RequestOptions): Promise<Memory> {
    return this.t.request('PATCH', bankPath(this.prefix, bank, `/memories/${seg(id)}`), {
      body: params,
      options,
    });
  }

  /** Deletes the observations consolidation derived from one memory and consolidates it again. */
  clearObservations(bank: string, id: string, options?: RequestOptions): Promise<ClearedMemoryObservations> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/memories/${seg(id)}/observations`), {
      options,
    });
  }

  delete(bank: string, id: string, options?: RequestOptions): Promise<DeletedMemory> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/memories/${encodeURIComponent(id)}`), {
      options,
    });
  }
}
