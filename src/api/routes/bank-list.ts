import { createRoute } from '@hono/zod-openapi';
import { bankProfile } from '../../core/banks.js';
import { notFound } from '../../core/errors.js';
import { authOf, guard } from '../auth.js';
import { BankListQuery, BankPage } from '../../contract/banks.js';
import { ok } from './openapi.js';
import { router, send, servicesOf } from './router.js';

/** Cursors of the bank list: the last bank id of a page, base64url-encoded. */
const encodeAfter = (id: string) => Buffer.from(id).toString('base64url');
const decodeAfter = (cursor: string | undefined) =>
  cursor ? Buffer.from(cursor, 'base64url').toString() : undefined;

/** `GET /banks`: the project's banks, ordered by id, paged; `?space=` keeps one space's banks. */
export const bankListRoutes = router().openapi(
  createRoute({
    method: 'get',
    path: '/banks',
    tags: ['Banks'],
    summary: 'List banks',
    description:
      'Bank profiles ordered by id, paged by `cursor` (default 50, max 500). `?space=` filters by space.',
    middleware: [guard('banks.list')] as const,
    request: { query: BankListQuery },
    responses: ok(BankPage),
  }),
  async (c) => {
    const s = servicesOf(c);
    const { projectId } = authOf(c);
    const q = c.req.valid('query');
    if (q.space !== undefined && !(await s.store.getSpace(projectId, q.space)))
      throw notFound(`space '${q.space}'`);
    const limit = q.limit ?? 50;
    // One extra row tells whether another page follows.
    const banks = await s.store.listBanks(
      projectId,
      { spaceId: q.space },
      { limit: limit + 1, after: decodeAfter(q.cursor) },
    );
    const page = banks.slice(0, limit);
    const items = await Promise.all(page.map((b) => bankProfile(s, b)));
    const last = page.at(-1);
    return send(c, { items, next_cursor: banks.length > limit && last ? encodeAfter(last.id) : null });
  },
);
