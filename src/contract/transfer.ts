import { z } from 'zod';
import { named } from './names.js';

/** `POST /banks/{bank}/document-transfer/export`: which documents (all by default). */
export const TransferExportQuery = z.object({
  include_observations: z.enum(['true', 'false']).optional().meta({
    description:
      'accepted for Hindsight’s clients; consolidation’s observations are never carried (the importing bank rebuilds them)',
  }),
  document_id: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({ description: 'only these documents (repeat the parameter); all by default' }),
});

/** The answer of an export's or import's submission: the queued operation (202). */
export const TransferSubmitted = z
  .object({
    operation_id: z.string(),
    status: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']),
  })
  .register(named, { name: 'DocumentTransferSubmitResponse' });

export const TransferImportQuery = z.object({
  on_conflict: z.enum(['skip', 'replace', 'new-id']).optional().meta({
    description:
      'a document id the bank holds already: `skip` it (the default), `replace` its memories, or import it under a `new-id`',
  }),
});

/** The multipart body of an import: the archive as the form field `file`. */
export const TransferImportForm = z.object({
  file: z
    .custom<File>((v) => v instanceof File, 'the archive, as the form field `file`')
    .meta({ type: 'string', format: 'binary', description: 'the ZIP an export wrote' }),
});

export const DownloadParams = z.object({
  key: z
    .string()
    .max(600)
    .meta({ param: { name: 'key', in: 'path' }, description: 'the `storage_key` of an export’s operation' }),
});

/** A finished export's `result_metadata`: where and what its archive is. */
export const TransferExportResult = z.object({
  download_url: z.string(),
  storage_key: z.string(),
  byte_size: z.number().int(),
  filename: z.string(),
  expires_at: z.string(),
  document_count: z.number().int(),
  fact_count: z.number().int(),
});

/** A finished import's `result_metadata`: what it stored and what it left. */
export const TransferImportResult = z.object({
  documents_imported: z.number().int(),
  documents_skipped: z.number().int(),
  facts_imported: z.number().int(),
  observations_imported: z.literal(0),
  observations_skipped: z.number().int(),
});
