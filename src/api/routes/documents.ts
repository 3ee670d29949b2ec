import { createRoute } from '@hono/zod-openapi';
import { deleteDocument, getDocument, listDocuments } from '../../core/documents.js';
import type { DocumentRecord } from '../../core/types.js';
import { authOf, guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import { ok } from './openapi.js';
import {
  DeletedDocument,
  DocumentDetail,
  DocumentPage,
  DocumentParams,
  OffsetQuery,
} from '../../contract/documents.js';
import { router, send, servicesOf } from './router.js';

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
      const page = await listDocuments(servicesOf(c), authOf(c).projectId, c.req.valid('param').bank, {
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
      const { bank, document_id } = c.req.valid('param');
      const { text, ...doc } = await getDocument(servicesOf(c), authOf(c).projectId, bank, document_id);
      return send(c, { ...summary(doc), original_text: text });
    },
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
      const { bank, document_id } = c.req.valid('param');
      const r = await deleteDocument(servicesOf(c), authOf(c).projectId, bank, document_id);
      return send(c, {
        ...r,
        success: true as const,
        memory_units_deleted: r.memories_deleted,
        message: `document '${document_id}' deleted`,
      });
    },
  );
