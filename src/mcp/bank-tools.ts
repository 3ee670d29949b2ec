import { BankListPage, BankListQuery, BankProfile, EntityPage, EntityQuery } from '../contract/banks.js';
import { listBankPage } from '../core/bank-list.js';
import { bankProfile, requireBank } from '../core/banks.js';
import { bankLine } from './render.js';
import { defineTool } from './tool.js';

export const listBanksTool = defineTool({
  name: 'list_banks',
  title: 'List banks',
  description:
    "The project's banks (one per subject) with their memory counts, ordered by id; `space` keeps one space's " +
    'banks, `q` those whose id contains the text. Pass `next_cursor` back as `cursor` for the next page.',
  action: 'banks.list',
  annotations: { openWorldHint: false },
  bank: false,
  input: BankListQuery.shape,
  output: BankListPage,
  run: async (ctx, a) => listBankPage(ctx.services, ctx.projectId, a, ctx),
  render: (p) => {
    const lines = p.items.map((b) => `- ${bankLine(b)}`);
    if (p.items.length === 0) lines.push('No banks yet.');
    if (p.next_cursor) lines.push(`More: cursor ${p.next_cursor}`);
    return lines.join('\n');
  },
});

export const getBankTool = defineTool({
  name: 'get_bank',
  title: 'Get bank profile',
  description: "A bank's profile: space, memory, entity and document counts, and its disposition (1-5 each).",
  action: 'banks.get',
  annotations: { openWorldHint: false },
  bank: true,
  input: {},
  output: BankProfile,
  run: async (ctx, _a, bank) =>
    bankProfile(ctx.services, await requireBank(ctx.services, ctx.projectId, bank)),
  render: (b) =>
    `${bankLine(b)}. Disposition: skepticism ${b.disposition.skepticism}, literalism ${b.disposition.literalism}, ` +
    `empathy ${b.disposition.empathy}. Created ${b.created_at}.`,
});

export const listEntitiesTool = defineTool({
  name: 'list_entities',
  title: 'List entities',
  description:
    'People, places, organisations and things a bank knows of, most mentioned first. Pass `next_cursor` back as ' +
    '`cursor` for the next page.',
  action: 'entities.list',
  annotations: { openWorldHint: false },
  bank: true,
  input: EntityQuery.shape,
  output: EntityPage,
  run: async (ctx, a, bank) => {
    await requireBank(ctx.services, ctx.projectId, bank);
    return ctx.services.store.listEntities(ctx.projectId, bank, { limit: a.limit ?? 50, cursor: a.cursor });
  },
  render: (p) => {
    const lines = p.items.map(
      (e) =>
        `- ${e.name} (${e.type}), ${e.mention_count} mentions` +
        `${e.aliases.length ? `, also ${e.aliases.join(', ')}` : ''}, last seen ${e.last_seen.slice(0, 10)}`,
    );
    if (p.items.length === 0) lines.push('No entities.');
    if (p.next_cursor) lines.push(`More: cursor ${p.next_cursor}`);
    return lines.join('\n');
  },
});
