import { z } from 'zod';
import { named } from './names.js';
import { DateOut, PageQuery } from './common.js';

/**
 * Kinds of operation the API cancels while they run, not only when pending: those charged when
 * queued (a Retain or upload, an import), which give back what they did not store. Cancelling a
 * running operation of any other kind is a 409.
 */
export const CANCELLABLE_WHILE_RUNNING = ['retain', 'import_documents'] as const;

export const OperationRecord = z
  .object({
    id: z.string(),
    bank_id: z.string(),
    kind: z.string(),
    status: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']),
    created_at: DateOut,
    updated_at: DateOut,
    items_count: z.number().int(),
    memories_created: z.number().int(),
    error: z.string().nullable(),
    attempts: z.number().int(),
    result_metadata: z.record(z.string(), z.unknown()).nullable().meta({
      description:
        'What a finished operation hands back beside its counts: a document-transfer export its `download_url`, `storage_key`, `byte_size` and `filename`; an import its counts. Null for the other kinds.',
    }),
    // Hindsight's names for the same values.
    operation_id: z.string().meta({ description: 'Same as id' }),
    task_type: z.string().meta({ description: 'Same as kind' }),
    operation_type: z.string().meta({ description: 'Same as kind' }),
    error_message: z.string().nullable().meta({ description: 'Same as error' }),
    retry_count: z.number().int().meta({ description: 'Runs after the first (attempts − 1, at least 0)' }),
  })
  .register(named, { name: 'Operation' });

export const OperationPage = z
  .object({
    items: z.array(OperationRecord),
    next_cursor: z.string().nullable(),
    bank_id: z.string(),
    operations: z.array(OperationRecord).meta({ description: 'Same as items (Hindsight’s name)' }),
    total: z.number().int().meta({ description: 'operations matching the filter, over every page' }),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'OperationPage' });
export const OperationQuery = z.object({
  ...PageQuery,
  status: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']).optional(),
  type: z
    .string()
    .max(64)
    .optional()
    .meta({ description: 'only operations of this kind (`retain`, `consolidate`, …)' }),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .meta({ description: 'skip this many (instead of `cursor`)' }),
});

/** What cancelling, retrying or deleting an operation answers: the operation, and Hindsight's fields. */
export const OperationOutcome = OperationRecord.extend({
  success: z.literal(true),
  message: z.string(),
}).register(named, { name: 'OperationOutcome' });
export const OperationParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  id: z.string().meta({ param: { name: 'id', in: 'path' } }),
});

export const AsyncRetainResponse = z
  .object({
    success: z.literal(true),
    async: z.literal(true),
    bank_id: z.string(),
    items_count: z.number().int(),
    operation_id: z.string(),
    operation_ids: z.array(z.string()),
    document_id: z.string().nullable(),
  })
  .register(named, { name: 'AsyncRetainResponse' });
