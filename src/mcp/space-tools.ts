import { z } from '@hono/zod-openapi';
import { Attachment, CreateSpaceBody, SpaceList, SpaceRecord } from '../contract/spaces.js';
import { attachBank, createSpace, listSpaces, removeBank } from '../core/spaces.js';
import { defineTool } from './tool.js';

const spaceArg = z.string().min(1).max(256).describe('Space id');

export const listSpacesTool = defineTool({
  name: 'list_spaces',
  title: 'List spaces',
  description: 'Spaces (organisations) of the project with their bank counts.',
  action: 'spaces.list',
  annotations: { openWorldHint: false },
  bank: false,
  input: {},
  output: SpaceList,
  run: async (ctx) => ({ items: await listSpaces(ctx.services, ctx.projectId, ctx.banks ?? null) }),
  render: (l) =>
    l.items.length
      ? l.items.map((s) => `- ${s.id} "${s.name}": ${s.bank_count} banks`).join('\n')
      : 'No spaces yet.',
});

export const createSpaceTool = defineTool({
  name: 'create_space',
  title: 'Create a space',
  description:
    'Create a space (an organisation grouping banks). Its org bank `__org__:{id}` holds what is shared by all its ' +
    'banks and can be blended into recall with `include_org`.',
  action: 'spaces.create',
  annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  bank: false,
  input: CreateSpaceBody.shape,
  output: SpaceRecord,
  run: (ctx, a) => createSpace(ctx.services, ctx.projectId, a),
  render: (s) => `Created space ${s.id} "${s.name}".`,
});

export const attachBankTool = defineTool({
  name: 'attach_bank',
  title: 'Attach a bank to a space',
  description: 'Attach a bank (created if new) to a space. A bank belongs to at most one space.',
  action: 'spaces.banks.attach',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  bank: true,
  input: { space: spaceArg },
  output: Attachment,
  run: (ctx, a, bank) => attachBank(ctx.services, ctx.projectId, a.space, bank),
  render: (r) => `Bank ${r.bank_id} is in space ${r.space_id}.`,
});

export const removeBankTool = defineTool({
  name: 'remove_bank',
  title: 'Remove a bank from a space',
  description: 'Detach a bank from its space. The bank and its memories are kept.',
  action: 'spaces.banks.remove',
  annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
  bank: true,
  input: { space: spaceArg },
  output: Attachment,
  run: (ctx, a, bank) => removeBank(ctx.services, ctx.projectId, a.space, bank),
  render: (r) => `Bank ${r.bank_id} is no longer in space ${r.space_id}; its memories are kept.`,
});
