import { createRoute } from '@hono/zod-openapi';

import { type FileMeta, retainFiles } from '../../core/retain/files.js';
import { AppError } from '../../core/errors.js';
import { BankParam, toDate } from '../../contract/common.js';
import { FileRetainForm, FileRetainRequest, FileRetainResponse } from '../../contract/files.js';
import { RetainQuery } from '../../contract/memories.js';
import { guard } from '../auth.js';
import { errorResponse, ok } from './openapi.js';
import { inBank, router, send } from './router.js';

/** The `request` part: JSON text of a FileRetainRequest, checked like any body. */
function fileMeta(text: string | undefined): FileMeta[] {
  if (text === undefined || text.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError('validation_error', 'request must be JSON text (a FileRetainRequest)', {
      details: [{ path: 'request', message: 'not JSON' }],
    });
  }
  const parsed = FileRetainRequest.safeParse(json);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({
      path: ['request', ...i.path.map(String)].join('.'),
      message: i.message,
    }));
    throw new AppError('validation_error', `request: ${details[0]!.path}: ${details[0]!.message}`, {
      details,
    });
  }
  return (parsed.data.files_metadata ?? []).map(({ timestamp, ...m }) => ({
    ...m,
    timestamp: toDate(timestamp),
  }));
}

/** File uploads retained as documents (Hindsight's files/retain). */
export const fileRoutes = router().openapi(
  createRoute({
    method: 'post',
    path: '/banks/{bank}/files/retain',
    tags: ['Memories'],
    summary: 'Retain files',
    description:
      "Uploads files (multipart/form-data: `files`, and `request`, the JSON text of a FileRetainRequest) and retains each one's text as a document (its id given in `files_metadata`, else the file's name), queued as one operation per file. Plain text, Markdown, HTML (scripts and styles dropped) and PDF are read; anything else is a 415. The upload is bounded by the body limit (413), and each file's text by the Retain limits.",
    middleware: [guard('files.retain')] as const,
    request: {
      params: BankParam,
      query: RetainQuery,
      body: { required: true, content: { 'multipart/form-data': { schema: FileRetainForm } } },
    },
    responses: {
      ...ok(FileRetainResponse),
      413: errorResponse('The upload, or the text of one of its files, is too large'),
      415: errorResponse('A file that is not plain text, Markdown, HTML or PDF'),
    },
  }),
  async (c) => {
    const form = c.req.valid('form');
    const parts = Array.isArray(form.files) ? form.files : [form.files];
    const files = await Promise.all(
      parts.map(async (f) => ({ name: f.name, type: f.type, data: new Uint8Array(await f.arrayBuffer()) })),
    );
    const r = await retainFiles(...inBank(c), files, fileMeta(form.request), {
      space: c.req.valid('query').space,
    });
    return send(c, r);
  },
);
