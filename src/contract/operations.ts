import { z } from 'zod';
import { named } from './names.js';
import { DateOut, PageQuery } from './common.js';

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
  })
  .register(named, { name: 'Operation' });

export const OperationPage = z.object({
  items: z.array(OperationRecord),
  next_cursor: z.string().nullable(),
});
export const OperationQuery = z.object({
  ...PageQuery,
  status: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']).optional(),
});
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
