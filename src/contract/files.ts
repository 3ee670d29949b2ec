import { z } from 'zod';
import { named } from './names.js';
import { IsoDate, Tags } from './common.js';

/** One uploaded file (a multipart part); rendered as binary in the OpenAPI document. */
const FilePart = z
  .custom<File>((v) => typeof File !== 'undefined' && v instanceof File, 'must be a file')
  .meta({ type: 'string', format: 'binary' });

/** What a caller says of one file: Hindsight's `files_metadata` entry. */
export const FileMetadata = z
  .object({
    document_id: z
      .string()
      .max(256)
      .optional()
      .meta({ description: "The document's id; default the file's name" }),
    context: z.string().max(10_000).optional(),
    tags: Tags.optional(),
    metadata: z.record(z.string().max(256), z.string().max(10_000)).optional(),
    timestamp: IsoDate.optional(),
  })
  .register(named, { name: 'FileMetadata' });

/** The JSON text of the `request` part (Hindsight's FileRetainRequest). */
export const FileRetainRequest = z
  .object({ files_metadata: z.array(FileMetadata).max(20).optional() })
  .register(named, { name: 'FileRetainRequest' });

export const FileRetainForm = z.object({
  files: z.union([FilePart, z.array(FilePart)]).meta({
    description: 'The files: plain text, Markdown, HTML or PDF (anything else is a 415)',
  }),
  request: z.string().max(1_000_000).optional().meta({
    description: 'JSON text of a FileRetainRequest: `files_metadata`, one entry per file, in order',
  }),
});

export const FileRetainResponse = z
  .object({
    success: z.literal(true),
    async: z.literal(true),
    bank_id: z.string(),
    operation_ids: z.array(z.string()).meta({ description: 'One operation per file (see operations)' }),
    files: z.array(
      z.object({
        name: z.string(),
        document_id: z.string(),
        operation_id: z.string(),
        kind: z.enum(['text', 'markdown', 'html', 'pdf']),
        characters: z.number().int(),
        items_count: z.number().int(),
      }),
    ),
  })
  .register(named, { name: 'FileRetainResponse' });

export const ReprocessResponse = z
  .object({
    success: z.literal(true),
    operation_id: z.string(),
    operation_ids: z.array(z.string()),
    document_id: z.string(),
    items_count: z.number().int(),
  })
  .register(named, { name: 'ReprocessDocumentResponse' });
