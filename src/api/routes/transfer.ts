import { createRoute } from '@hono/zod-openapi';
import { requireInScope } from '../../core/bank-scope.js';
import { AppError, notFound } from '../../core/errors.js';
import { bankOfKey, queueExport } from '../../core/transfer/export.js';
import { queueImport } from '../../core/transfer/import.js';
import { BankParam } from '../../contract/common.js';
import {
  DownloadParams,
  TransferExportQuery,
  TransferImportForm,
  TransferImportQuery,
  TransferSubmitted,
} from '../../contract/transfer.js';
import { authOf, guard } from '../auth.js';
import { errorResponse, errorResponses } from './openapi.js';
import { inBank, router, servicesOf } from './router.js';

const TAG = ['Document transfer'];

const submitted = {
  202: {
    description: 'Queued: poll `GET .../operations/{operation_id}`',
    content: { 'application/json': { schema: TransferSubmitted } },
  },
  ...errorResponses,
} as const;

/** `/v1/me` or `/v1/default`: where the caller reaches the download. */
const surface = (path: string) => (path.startsWith('/v1/me/') ? '/v1/me' : '/v1/default');

/**
 * Hindsight's document transfer: an asynchronous export of a bank's documents as a ZIP archive
 * (an operation whose `result_metadata` names the download), its download, and the import of
 * such an archive into a bank (an operation too).
 */
export const transferRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/document-transfer',
      tags: TAG,
      summary: 'Synchronous export (retired)',
      description:
        'Retired, as in Hindsight 0.9.2: always 410, naming the asynchronous export (`POST .../document-transfer/export`).',
      middleware: [guard('banks.transfer.export')] as const,
      request: { params: BankParam },
      responses: { 410: errorResponse('Retired: use the asynchronous export'), ...errorResponses },
    }),
    (c) => {
      const bank = encodeURIComponent(c.req.valid('param').bank);
      const base = surface(c.req.path);
      throw new AppError(
        'gone',
        `Synchronous document export has been removed. Submit an async export via POST ${base}/banks/${bank}/document-transfer/export, poll GET ${base}/banks/${bank}/operations/{operation_id}, then download the archive from the download_url in the operation's result_metadata.`,
      );
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/document-transfer/export',
      tags: TAG,
      summary: 'Export documents (asynchronous)',
      description:
        'Queues an export of the bank’s documents and their memories (all, or those named by `document_id`) as a ZIP archive. The operation’s `result_metadata` names `download_url` and `storage_key`; the archive can be downloaded for 24 hours. An encrypted bank’s archive is stored sealed under its data key. It is charged recall units (1 per whole 1,000 memories of the bank) before it is queued; one export of a bank is queued at a time (another is a 429 `exports_per_bank`, refused before it is charged), and a bank keeps its 5 newest archives.',
      middleware: [guard('banks.transfer.export')] as const,
      request: { params: BankParam, query: TransferExportQuery },
      responses: submitted,
    }),
    async (c) => {
      const ids = c.req.queries('document_id');
      const out = await queueExport(...inBank(c), {
        ...(ids ? { documentIds: ids } : {}),
        base: surface(c.req.path),
      });
      return c.json(out, 202);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/document-transfer',
      tags: TAG,
      summary: 'Import documents (asynchronous)',
      description:
        'Takes an archive (form field `file`) an export wrote, checks all of it (ZIP at most 10 MB, 32 MB inflated, 20,000 documents, 50,000 facts, each fact as a Retain item) and charges the project’s quotas before anything is stored, then queues a Retain of its facts as they were (no extraction, no model call). The bank is created if missing. `on_conflict` decides what a document id the bank holds already becomes.',
      middleware: [guard('banks.transfer.import')] as const,
      request: {
        params: BankParam,
        query: TransferImportQuery,
        body: { content: { 'multipart/form-data': { schema: TransferImportForm } }, required: true },
      },
      responses: submitted,
    }),
    async (c) => {
      const file = c.req.valid('form').file;
      const bytes = new Uint8Array(await file.arrayBuffer());
      const out = await queueImport(...inBank(c), bytes, c.req.valid('query').on_conflict ?? 'skip');
      return c.json(out, 202);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/files/download/{key}',
      tags: TAG,
      summary: 'Download an export’s archive',
      description:
        'The ZIP of a finished export, by the `storage_key` its operation names, within 24 hours. The key names its bank: a key of another project, or limited to other banks, gets 404.',
      middleware: [guard('files.download')] as const,
      request: { params: DownloadParams },
      responses: {
        200: {
          description: 'The archive',
          content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
        },
        ...errorResponses,
      },
    }),
    async (c) => {
      const { key } = c.req.valid('param');
      const auth = authOf(c);
      const bankId = bankOfKey(key);
      if (bankId === null) throw notFound('file');
      if (auth.banks !== null) requireInScope(auth.banks, bankId);
      const s = servicesOf(c);
      const archive = await s.store.getArchive(auth.projectId, bankId, key, s.now());
      if (!archive) throw notFound('file');
      return c.body(new Uint8Array(archive.data), 200, {
        'content-type': 'application/zip',
        'content-disposition': `attachment; filename="${archive.filename}"`,
        'content-length': String(archive.data.length),
      });
    },
  );
