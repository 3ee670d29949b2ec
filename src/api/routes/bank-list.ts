import { createRoute } from '@hono/zod-openapi';
import { listBankPage } from '../../core/bank-list.js';
import { authOf, guard } from '../auth.js';
import { BankListQuery, BankPage } from '../../contract/banks.js';
import { ok } from './openapi.js';
import { router, send, servicesOf } from './router.js';

/** `GET /banks`: the project's banks, ordered by id, paged; `?space=` keeps one space's banks. */
export const bankListRoutes = router().openapi(
  createRoute({
    method: 'get',
    path: '/banks',
    tags: ['Banks'],
    summary: 'List banks',
    description:
      'Bank profiles ordered by id, paged by `cursor` or `offset` (default 50, max 500). `?space=` keeps one space’s banks, `?q=` those whose id contains the text. `banks` repeats `items` and `total` counts every match (Hindsight’s shape).',
    middleware: [guard('banks.list')] as const,
    request: { query: BankListQuery },
    responses: ok(BankPage),
  }),
  async (c) => {
    const auth = authOf(c);
    const page = await listBankPage(servicesOf(c), auth.projectId, c.req.valid('query'), auth);
    return send(c, { ...page, banks: page.items });
  },
);
