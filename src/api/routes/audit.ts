import { createRoute } from '@hono/zod-openapi';
import { authOf, guard } from '../auth.js';
import { toDate } from '../../contract/common.js';
import { scopeParts } from '../../core/bank-scope.js';
import { ok } from './openapi.js';
import { AuditPage, AuditQuery } from '../../contract/projects.js';
import { router, send, servicesOf } from './router.js';

/** The project's append-only audit trail. */
export const auditRoutes = router().openapi(
  createRoute({
    method: 'get',
    path: '/audit',
    tags: ['Audit'],
    summary: 'List audit entries',
    description:
      'Every mutating request and every 401/403, newest first; filter by bank, action and time. A key limited to some banks sees only the entries of its banks.',
    middleware: [guard('audit.list')] as const,
    request: { query: AuditQuery },
    responses: ok(AuditPage),
  }),
  async (c) => {
    const q = c.req.valid('query');
    const { projectId, banks } = authOf(c);
    const page = await servicesOf(c).store.listAudit(
      projectId,
      {
        bankId: q.bank,
        // A key limited to some banks reads only their entries; project-wide ones are not its.
        banks: banks === null ? undefined : scopeParts(banks),
        action: q.action,
        since: toDate(q.since),
        until: toDate(q.until),
      },
      { limit: q.limit ?? 50, cursor: q.cursor },
    );
    return send(c, page);
  },
);
