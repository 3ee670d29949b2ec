import { createRoute } from '@hono/zod-openapi';
import {
  attachBank,
  createSpace,
  deleteSpace,
  listSpaceBanks,
  listSpaces,
  removeBank,
} from '../../core/spaces.js';
import { authOf, guard } from '../auth.js';
import { SpaceParam } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import {
  Attachment,
  CreateSpaceBody,
  DeletedSpace,
  SpaceBankParams,
  SpaceBanks,
  SpaceList,
  SpaceRecord,
} from '../../contract/spaces.js';
import { router, send, servicesOf } from './router.js';

/** Spaces (organisations) and the banks attached to them. */
export const spaceRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/spaces',
      tags: ['Spaces'],
      summary: 'List spaces',
      description:
        'Every space of the project; for a key limited to some banks, only the spaces holding one of its banks, each counting only those.',
      middleware: [guard('spaces.list')] as const,
      responses: ok(SpaceList),
    }),
    async (c) => {
      const { projectId, banks } = authOf(c);
      return send(c, { items: await listSpaces(servicesOf(c), projectId, banks) });
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/spaces',
      tags: ['Spaces'],
      summary: 'Create a space',
      middleware: [guard('spaces.create')] as const,
      request: jsonBody(CreateSpaceBody),
      responses: ok(SpaceRecord, 'Created', 201),
    }),
    async (c) => send(c, await createSpace(servicesOf(c), authOf(c).projectId, c.req.valid('json')), 201),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/spaces/{space}/banks',
      tags: ['Spaces'],
      summary: 'List banks in a space',
      description:
        'For a key limited to some banks, only its banks; a space holding none of them is not found.',
      middleware: [guard('spaces.banks.list')] as const,
      request: { params: SpaceParam },
      responses: ok(SpaceBanks),
    }),
    async (c) => {
      const { projectId, banks } = authOf(c);
      return send(c, {
        items: await listSpaceBanks(servicesOf(c), projectId, c.req.valid('param').space, banks),
      });
    },
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/spaces/{space}/banks/{bank}',
      tags: ['Spaces'],
      summary: 'Attach a bank to a space',
      middleware: [guard('spaces.banks.attach')] as const,
      request: { params: SpaceBankParams },
      responses: ok(Attachment),
    }),
    async (c) => {
      const { space, bank } = c.req.valid('param');
      return send(c, await attachBank(servicesOf(c), authOf(c).projectId, space, bank));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/spaces/{space}/banks/{bank}',
      tags: ['Spaces'],
      summary: 'Remove a bank from a space (its memories stay)',
      middleware: [guard('spaces.banks.remove')] as const,
      request: { params: SpaceBankParams },
      responses: ok(Attachment),
    }),
    async (c) => {
      const { space, bank } = c.req.valid('param');
      return send(c, await removeBank(servicesOf(c), authOf(c).projectId, space, bank));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/spaces/{space}',
      tags: ['Spaces'],
      summary: 'Delete a space (its banks become unassigned)',
      middleware: [guard('spaces.delete')] as const,
      request: { params: SpaceParam },
      responses: ok(DeletedSpace),
    }),
    async (c) => send(c, await deleteSpace(servicesOf(c), authOf(c).projectId, c.req.valid('param').space)),
  );
