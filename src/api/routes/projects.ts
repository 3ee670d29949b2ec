import type { Action } from '../../contract/actions.js';
import { createRoute } from '@hono/zod-openapi';
import {
  createKey,
  createProject,
  deleteProject,
  keyView,
  requireProject,
  revokeKey,
} from '../../core/projects.js';
import { projectWithUsage } from '../../core/quotas.js';
import { guard } from '../auth.js';
import { toDate } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import {
  CreatedKey,
  CreateKeyBody,
  CreateProjectBody,
  KeyList,
  KeyParams,
  PatchProjectBody,
  ProjectList,
  ProjectParam,
  ProjectRecord,
  ProjectWithUsage,
} from '../../contract/projects.js';
import { z } from '@hono/zod-openapi';
import { router, send, servicesOf } from './router.js';

const op = (action: Action) => [guard(action)];

/** Operator-only: projects (tenants) and their API keys. Mounted under /v1/default. */
export const projectRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/projects',
      tags: ['Projects'],
      summary: 'List projects',
      middleware: op('projects.list'),
      responses: ok(ProjectList),
    }),
    async (c) => send(c, { items: await servicesOf(c).store.listProjects() }),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/projects',
      tags: ['Projects'],
      summary: 'Create a project',
      middleware: op('projects.create'),
      request: jsonBody(CreateProjectBody),
      responses: ok(ProjectRecord, 'Created', 201),
    }),
    async (c) => send(c, await createProject(servicesOf(c), c.req.valid('json')), 201),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/projects/{project}',
      tags: ['Projects'],
      summary: 'Get a project with its effective limits and current usage',
      middleware: op('projects.get'),
      request: { params: ProjectParam },
      responses: ok(ProjectWithUsage),
    }),
    async (c) => {
      const s = servicesOf(c);
      return send(c, await projectWithUsage(s, await requireProject(s, c.req.valid('param').project)));
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/projects/{project}',
      tags: ['Projects'],
      summary: "Update a project's limits",
      middleware: op('projects.update'),
      request: { params: ProjectParam, ...jsonBody(PatchProjectBody) },
      responses: ok(ProjectRecord),
    }),
    async (c) => {
      const s = servicesOf(c);
      const { project } = c.req.valid('param');
      await requireProject(s, project);
      const body = c.req.valid('json');
      const updated = body.limits ? await s.store.updateProjectLimits(project, body.limits) : null;
      return send(c, updated ?? (await requireProject(s, project)));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/projects/{project}',
      tags: ['Projects'],
      summary: 'Delete a project and all its data',
      middleware: op('projects.delete'),
      request: { params: ProjectParam },
      responses: ok(z.object({ deleted: z.literal(true), id: z.string() })),
    }),
    async (c) => send(c, await deleteProject(servicesOf(c), c.req.valid('param').project)),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/projects/{project}/keys',
      tags: ['Projects'],
      summary: 'Create an API key (the secret is shown once)',
      middleware: op('keys.create'),
      request: { params: ProjectParam, ...jsonBody(CreateKeyBody) },
      responses: ok(CreatedKey, 'Created', 201),
    }),
    async (c) => {
      const body = c.req.valid('json');
      const key = await createKey(servicesOf(c), c.req.valid('param').project, {
        name: body.name,
        scopes: body.scopes,
        banks: body.banks ?? null,
        expires_at: toDate(body.expires_at ?? undefined) ?? null,
      });
      return send(c, key, 201);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/projects/{project}/keys',
      tags: ['Projects'],
      summary: 'List API keys (never the secrets)',
      middleware: op('keys.list'),
      request: { params: ProjectParam },
      responses: ok(KeyList),
    }),
    async (c) => {
      const s = servicesOf(c);
      const { project } = c.req.valid('param');
      await requireProject(s, project);
      return send(c, { items: (await s.store.listApiKeys(project)).map(keyView) });
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/projects/{project}/keys/{key_id}',
      tags: ['Projects'],
      summary: 'Revoke an API key (effective at once)',
      middleware: op('keys.revoke'),
      request: { params: KeyParams },
      responses: ok(z.object({ revoked: z.literal(true), id: z.string() })),
    }),
    async (c) => {
      const { project, key_id } = c.req.valid('param');
      return send(c, await revokeKey(servicesOf(c), project, key_id));
    },
  );
