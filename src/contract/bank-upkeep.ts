import { z } from 'zod';
import { named } from './names.js';
import { FactTypeSchema } from './common.js';
import { Disposition } from './banks.js';

const level = z.number().int().min(1).max(5);

/** `PUT /banks/{bank}/profile` (Hindsight's older call): the disposition traits, 1–5 each. */
export const DispositionBody = z
  .object({ disposition: z.object({ skepticism: level, literalism: level, empathy: level }) })
  .register(named, { name: 'UpdateDisposition' });

/** `POST /banks/{bank}/background` (Hindsight's older call): sets the mission. */
export const BackgroundBody = z
  .object({
    content: z.string().max(20_000),
    update_disposition: z
      .boolean()
      .optional()
      .meta({ description: 'accepted and ignored, as Hindsight does' }),
  })
  .register(named, { name: 'AddBackground' });

export const BackgroundResponse = z
  .object({ mission: z.string(), background: z.string().nullable(), disposition: Disposition })
  .register(named, { name: 'Background' });

export const ClearMemoriesQuery = z.object({
  type: FactTypeSchema.optional().meta({ description: 'only memories of this fact type' }),
});

export const ClearedMemories = z
  .object({ success: z.literal(true), deleted_count: z.number().int(), message: z.string() })
  .register(named, { name: 'ClearedMemories' });
