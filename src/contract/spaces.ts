import { z } from 'zod';
import { named } from './names.js';
import { BankProfile } from './banks.js';
import { DateOut } from './common.js';

export const SpaceRecord = z
  .object({ id: z.string(), name: z.string(), created_at: DateOut, bank_count: z.number().int() })
  .register(named, { name: 'Space' });
export const SpaceList = z.object({ items: z.array(SpaceRecord) });
export const CreateSpaceBody = z
  .object({ id: z.string().min(1).max(256), name: z.string().min(1).max(256) })
  .register(named, { name: 'CreateSpace' });
export const SpaceBanks = z.object({ items: z.array(BankProfile) });
export const Attachment = z.object({ space_id: z.string(), bank_id: z.string(), attached: z.boolean() });
export const DeletedSpace = z.object({
  deleted: z.literal(true),
  id: z.string(),
  banks_unassigned: z.number().int(),
});
export const SpaceBankParams = z.object({
  space: z.string().meta({ param: { name: 'space', in: 'path' } }),
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
});
