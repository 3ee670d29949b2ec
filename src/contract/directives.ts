import { z } from 'zod';
import { named } from './names.js';
import { DateOut, Tags } from './common.js';

export const DirectiveText = z.string().min(1).max(4000);
export const DirectiveName = z.string().min(1).max(200);
export const DirectivePriority = z.number().int().min(-1000).max(1000);

export const DirectiveRecord = z
  .object({
    id: z.string(),
    bank_id: z.string(),
    name: z.string(),
    text: z.string(),
    content: z.string().meta({ description: "Same as `text` (Hindsight's field name)" }),
    priority: z.number().int(),
    tags: z.array(z.string()),
    active: z.boolean(),
    is_active: z.boolean().meta({ description: "Same as `active` (Hindsight's field name)" }),
    created_at: DateOut,
    updated_at: DateOut,
  })
  .register(named, { name: 'Directive' });

export const DirectiveList = z
  .object({ items: z.array(DirectiveRecord) })
  .register(named, { name: 'DirectiveList' });

/**
 * `text` or Hindsight's `content`, `active` or `is_active`: both spellings are accepted and
 * folded to ours by the route.
 */
export const CreateDirectiveBody = z
  .object({
    text: DirectiveText.optional(),
    content: DirectiveText.optional(),
    name: DirectiveName.optional(),
    priority: DirectivePriority.optional().meta({ description: 'Higher first; default 0' }),
    tags: Tags.optional().meta({
      description: 'Untagged directives always apply; tagged ones when the Reflect request’s tags match',
    }),
    active: z.boolean().optional(),
    is_active: z.boolean().optional(),
  })
  .refine((b) => b.text !== undefined || b.content !== undefined, {
    message: 'text is required',
    path: ['text'],
  })
  .meta({
    example: { text: 'Never recommend a product the customer has returned.', priority: 10 },
  })
  .register(named, { name: 'DirectiveCreate' });

/** `null` leaves a field as it is (Hindsight's clients send nulls for fields they do not change). */
export const UpdateDirectiveBody = z
  .object({
    text: DirectiveText.nullish(),
    content: DirectiveText.nullish(),
    name: DirectiveName.nullish(),
    priority: DirectivePriority.nullish(),
    tags: Tags.nullish(),
    active: z.boolean().nullish(),
    is_active: z.boolean().nullish(),
  })
  .meta({ example: { active: false } })
  .register(named, { name: 'DirectiveUpdate' });

export const DirectiveParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  id: z.string().meta({ param: { name: 'id', in: 'path' } }),
});

export const DeletedDirective = z.object({ deleted: z.literal(true), id: z.string() });
