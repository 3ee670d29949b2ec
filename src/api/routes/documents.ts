import { createRoute } from '@hono/zod-openapi';
import { deleteDocument, getDocument, listDocuments, reprocessDocument } from '../../core/documents.js';
import type { DocumentRecord } from '../../core/types.js';
import { guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import { errorResponse, ok } from './openapi.js';
import {
  DeletedDocument,
  DocumentDetail,
  DocumentPage,
  DocumentParams,
  OffsetQuery,
} from '../../contract/documents.js';
import { ReprocessResponse } from '../../contract/files.js';
import { inBank, router, send } from './router.js';

const summary = (d: DocumentRecord) => ({
  ...d,
  content_hash: d.content_hash || null,
  memory_unit_count: d.memory_count,
});

/** Documents: memories grouped by document id (Hindsight-compatible shapes). */
export const documentRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/documents',
      tags: ['Documents'],
      summary: 'List documents',
      middleware: [guard('documents.list')] as const,
      request: { params: BankParam, query: OffsetQuery },
      responses: ok(DocumentPage),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      const page = await listDocuments(...inBank(c), {
        limit,
        offset,
      });
      return send(c, { items: page.items.map(summary), total: page.total, limit, offset });
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/documents/{document_id}',
      tags: ['Documents'],
      summary: 'Get a document with its text',
      middleware: [guard('documents.get')] as const,
      request: { params: DocumentParams },
      responses: ok(DocumentDetail),
    }),
    async (c) => {
      const { document_id } = c.req.valid('param');
      const { text, ...doc } = await getDocument(...inBank(c), document_id);
      return send(c, { ...summary(doc), original_text: text });
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/documents/{document_id}/reprocess',
      tags: ['Documents'],
      summary: 'Reprocess a document',
      description:
        "Runs the document's extraction again from the source it was retained from (kept beside it, sealed in an encrypted bank), as a queued Retain that replaces its memories; the observations derived from them go, as when the document is forgotten. A document retained without a kept source (before mnemo kept them, or appended to) is a 409.",
      middleware: [guard('documents.reprocess')] as const,
      request: { params: DocumentParams },
      responses: { ...ok(ReprocessResponse), 409: errorResponse('The document has no kept source') },
    }),
    async (c) => send(c, await reprocessDocument(...inBank(c), c.req.valid('param').document_id)),
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/documents/{document_id}',
      tags: ['Documents'],
      summary: 'Delete a document and its memories',
      middleware: [guard('documents.delete')] as const,
      request: { params: DocumentParams },
      responses: ok(DeletedDocument),
    }),
    async (c) => {
      const { document_id } = c.req.valid('param');
      const r = await deleteDocument(...inBank(c), document_id);
      return send(c, {
        ...r,
        success: true as const,
        memory_units_deleted: r.memories_deleted,
        message: `document '${document_id}' deleted`,
      });
    },
  );
