import type { RequestOptions, Transport } from '../http.js';
import { type Page, PagedList } from '../pagination.js';
import type {
  ChunkPage,
  DeletedDocument,
  Document,
  DocumentSummary,
  ListDocumentsParams,
  ReprocessDocumentResponse,
  UpdatedDocument,
} from '../types.js';
import { bankPath, seg } from './paths.js';

/** A page of documents: offset-paged on the wire, with the total. */
export interface DocumentPage extends Page<DocumentSummary> {
  total: number;
  limit: number;
  offset: number;
}

/** Documents: the groups of memories retained under one `document_id`. */
export class DocumentsResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** The bank's documents: `await` for one page, `for await` for all of them. */
  list(
    bank: string,
    params: ListDocumentsParams = {},
    options?: RequestOptions,
  ): PagedList<DocumentSummary, DocumentPage> {
    return new PagedList(async (cursor) => {
      const offset = cursor === undefined ? (params.offset ?? 0) : Number(cursor);
      const page = await this.t.request<Omit<DocumentPage, 'next_cursor'>>(
        'GET',
        bankPath(this.prefix, bank, '/documents'),
        {
          query: { limit: params.limit, offset },
          options,
        },
      );
      const next = page.offset + page.items.length;
      return { ...page, next_cursor: page.items.length > 0 && next < page.total ? String(next) : null };
    });
  }

  /** One document with its memories' text joined in order (`original_text`). */
  get(bank: string, documentId: string, options?: RequestOptions): Promise<Document> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/documents/${seg(documentId)}`), { options });
  }

  /** The document's pieces (its memories) in retained order, offset-paged. */
  chunks(
    bank: string,
    documentId: string,
    params: { limit?: number; offset?: number } = {},
    options?: RequestOptions,
  ): Promise<ChunkPage> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/documents/${seg(documentId)}/chunks`), {
      query: params,
      options,
    });
  }

  /** Gives every memory of the document these tags. */
  setTags(
    bank: string,
    documentId: string,
    tags: string[],
    options?: RequestOptions,
  ): Promise<UpdatedDocument> {
    return this.t.request('PATCH', bankPath(this.prefix, bank, `/documents/${seg(documentId)}`), {
      body: { tags },
      options,
    });
  }

  /** Runs the document's extraction again from its kept source (an operation; 409 without one). */
  reprocess(bank: string, documentId: string, options?: RequestOptions): Promise<ReprocessDocumentResponse> {
    return this.t.request('POST', bankPath(this.prefix, bank, `/documents/${seg(documentId)}/reprocess`), {
      options,
    });
  }

  /** Deletes the document and its memories. */
  delete(bank: string, documentId: string, options?: RequestOptions): Promise<DeletedDocument> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/documents/${seg(documentId)}`), {
      options,
    });
  }
}
