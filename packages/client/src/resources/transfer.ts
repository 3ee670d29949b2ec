import type { RequestOptions, Transport } from '../http.js';
import type {
  TransferExportResult,
  TransferOnConflict,
  TransferOperation,
  TransferSubmitted,
} from '../types.js';
import type { OperationsResource } from './operations.js';
import { bankPath, seg } from './paths.js';

/**
 * Document transfer (Hindsight's archive): a bank's documents exported as a ZIP by an
 * operation, the archive downloaded within 24 hours, and an archive imported by an operation.
 * An export needs `recall` (so does polling it, and the download); an import needs `retain`.
 */
export class TransferResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
    private readonly operations: OperationsResource,
  ) {}

  /** Queues an export of the bank's documents (all, or those named); poll it for the download. */
  export(
    bank: string,
    params: { documentIds?: string[] } = {},
    options?: RequestOptions,
  ): Promise<TransferSubmitted> {
    // Repeated `document_id` parameters: a document id may itself hold a comma.
    const query = new URLSearchParams((params.documentIds ?? []).map((id) => ['document_id', id]));
    const q = query.toString() ? `?${query}` : '';
    return this.t.request('POST', bankPath(this.prefix, bank, `/document-transfer/export${q}`), { options });
  }

  /**
   * Waits until the export or import is completed, failed or cancelled and returns its
   * operation; a completed one's `result_metadata` is a `TransferExportResult` (it has
   * `storage_key`) or a `TransferImportResult` (it has `documents_imported`).
   */
  poll(
    bank: string,
    operationId: string,
    opts: { interval?: number; timeout?: number; signal?: AbortSignal } = {},
  ): Promise<TransferOperation> {
    return this.operations.wait(bank, operationId, opts) as Promise<TransferOperation>;
  }

  /** The archive's bytes (a ZIP), by a finished export's result or its `storage_key`. */
  download(
    target: string | Pick<TransferExportResult, 'storage_key'>,
    options?: RequestOptions,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const key = typeof target === 'string' ? target : target.storage_key;
    return this.t.request('GET', `${this.prefix}/files/download/${seg(key)}`, {
      options: { ...options, headers: { accept: 'application/zip, application/json', ...options?.headers } },
      binary: true,
    });
  }

  /**
   * Queues the import of an archive an export wrote (checked whole first: a bad one is a 4xx
   * and stores nothing). The bank is created if missing; `onConflict` (default `skip`) decides
   * what a document id the bank holds already becomes.
   */
  import(
    bank: string,
    archive: Blob | Uint8Array,
    params: { onConflict?: TransferOnConflict; filename?: string } = {},
    options?: RequestOptions,
  ): Promise<TransferSubmitted> {
    const form = new FormData();
    const blob =
      archive instanceof Blob ? archive : new Blob([new Uint8Array(archive)], { type: 'application/zip' });
    form.append('file', blob, params.filename ?? 'archive.zip');
    return this.t.request('POST', bankPath(this.prefix, bank, '/document-transfer'), {
      query: { on_conflict: params.onConflict },
      body: form,
      options,
    });
  }
}
