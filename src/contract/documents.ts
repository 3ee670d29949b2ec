import { z } from 'zod';
import { Receipt } from './receipts.js';
import { named } from './names.js';
import { DateOut } from './common.js';

const documentFields = {
  id: z.string(),
  bank_id: z.string(),
  content_hash: z.string().nullable(),
  created_at: DateOut,
  updated_at: DateOut,
  memory_count: z.number().int(),
  memory_unit_count: z.number().int().meta({ description: "Same as memory_count (Hindsight's name)" }),
};

export const DocumentSummary = z.object(documentFields).register(named, { name: 'DocumentSummary' });
export const DocumentDetail = z
  .object({ ...documentFields, original_text: z.string().nullable() })
  .register(named, { name: 'Document' });
export const DocumentPage = z
  .object({
    items: z.array(DocumentSummary),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'DocumentPage' });
export const OffsetQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});
export const DocumentParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  document_id: z.string().meta({ param: { name: 'document_id', in: 'path' } }),
});
export const DeletedDocument = z.object({
  deleted: z.literal(true),
  success: z.literal(true),
  document_id: z.string(),
  memories_deleted: z.number().int(),
  memory_units_deleted: z.number().int(),
  message: z.string(),
  receipt: Receipt,
});
