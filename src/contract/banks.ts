import { z } from 'zod';
import { Receipt } from './receipts.js';
import { named } from './names.js';
import { BANK_CONFIG_SCHEMA } from './bank-config.js';
import { DateOut, PageQuery } from './common.js';

export const Disposition = z.object({
  skepticism: z.number().int(),
  literalism: z.number().int(),
  empathy: z.number().int(),
});

export const BankProfile = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    mission: z.string().nullable(),
    space_id: z.string().nullable(),
    is_org_bank: z.boolean(),
    created_at: DateOut,
    updated_at: DateOut,
    memory_count: z.number().int(),
    entity_count: z.number().int(),
    document_count: z.number().int(),
    disposition: Disposition,
    llm_usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
  })
  .register(named, { name: 'BankProfile' });

/** The effective config: the core schema is the one definition of every key. */
export const BankConfigValues = z
  .object(BANK_CONFIG_SCHEMA.shape)
  .register(named, { name: 'BankConfigValues' });

export const BankConfigView = z
  .object({ bank_id: z.string(), config: BankConfigValues, overrides: z.record(z.string(), z.unknown()) })
  .register(named, { name: 'BankConfig' });

/** Values are checked key by key in core (unknown keys are a 400 there). */
export const PatchConfigBody = z
  .object({ updates: z.record(z.string(), z.unknown()) })
  .meta({
    example: { updates: { disposition_empathy: 4, enable_reranking: false } },
  })
  .register(named, { name: 'BankConfigUpdate' });

export const DeletedBank = z.object({
  deleted: z.literal(true),
  bank_id: z.string(),
  memories_deleted: z.number().int(),
  success: z.literal(true).meta({ description: 'Hindsight’s name for `deleted`' }),
  deleted_count: z.number().int().meta({ description: 'Same as memories_deleted (Hindsight’s name)' }),
  message: z.string(),
  receipt: Receipt,
});

export const EntityRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    aliases: z.array(z.string()),
    mention_count: z.number().int(),
    first_seen: DateOut,
    last_seen: DateOut,
  })
  .register(named, { name: 'Entity' });

export const EntityPage = z.object({ items: z.array(EntityRecord), next_cursor: z.string().nullable() });
export const EntityQuery = z.object(PageQuery);

/** `GET /banks/{bank}/entities`: the page with Hindsight's names and offset paging beside mnemo's. */
export const EntityListPage = z
  .object({
    items: z.array(
      EntityRecord.extend({ canonical_name: z.string().meta({ description: 'Same as name (Hindsight’s)' }) }),
    ),
    next_cursor: z.string().nullable(),
    total: z.number().int().meta({ description: 'entities the bank’s memories mention' }),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'EntityListPage' });
export const EntityListQuery = EntityQuery.extend({
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .meta({ description: 'skip this many (instead of `cursor`)' }),
});

export const BankListQuery = z.object({
  ...PageQuery,
  space: z.string().max(256).optional().meta({ description: 'only banks attached to this space' }),
  q: z.string().max(256).optional().meta({ description: 'only banks whose id contains this (any case)' }),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .meta({ description: 'skip this many banks (instead of `cursor`)' }),
});

/** A bank of the list: its profile with Hindsight's names beside mnemo's. */
export const BankListItem = BankProfile.extend({
  bank_id: z.string().meta({ description: 'Same as id (Hindsight’s name)' }),
  fact_count: z.number().int().meta({ description: 'Same as memory_count (Hindsight’s name)' }),
}).register(named, { name: 'BankListItem' });

/** A page of the bank list (the MCP tool's answer). */
export const BankListPage = z
  .object({
    items: z.array(BankListItem),
    next_cursor: z.string().nullable(),
    total: z.number().int().meta({ description: 'banks matching the filter, over every page' }),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'BankListPage' });

/** `GET /banks`: the page, with `banks` repeating `items` under Hindsight's name. */
export const BankPage = BankListPage.extend({
  banks: z.array(BankListItem).meta({ description: 'Same as items (Hindsight’s name)' }),
}).register(named, { name: 'BankPage' });
