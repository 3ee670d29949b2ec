import { walkFare } from './budgets.js';
import { type BankScope, scopeParts } from './bank-scope.js';
import { bankProfile } from './banks.js';
import { notFound } from './errors.js';
import type { Deps } from './services.js';
import type { BankStore, LimitStore } from '../store/store.js';

/** Cursors of the bank list: the last bank id of a page, base64url-encoded (opaque to callers). */
const encodeAfter = (id: string) => Buffer.from(id).toString('base64url');
const decodeAfter = (cursor: string | undefined) =>
  cursor ? Buffer.from(cursor, 'base64url').toString() : undefined;

export interface BankListRequest {
  space?: string;
  /** Keeps the banks whose id contains this text, in any case. */
  q?: string;
  limit?: number;
  /** Keyset paging (mnemo's): the previous page's `next_cursor`. */
  cursor?: string;
  /** Offset paging (Hindsight's); ignored with a cursor. */
  offset?: number;
}

/** Who lists: a bank-scoped key sees only its banks (core/bank-scope.ts). */
export interface BankListScope {
  banks?: BankScope;
}

/**
 * A page of the project's banks ordered by id, each profile with Hindsight's names beside
 * mnemo's, and how many banks match over every page.
 */
export async function listBankPage(
  s: Deps<BankStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  q: BankListRequest,
  who: BankListScope = {},
) {
  const scope = who.banks ?? null;
  // A scoped key is not told which spaces exist: an unknown space lists nothing.
  if (q.space !== undefined && scope === null && !(await s.store.getSpace(projectId, q.space)))
    throw notFound(`space '${q.space}'`);
  const limit = q.limit ?? 50;
  const offset = q.cursor === undefined ? (q.offset ?? 0) : 0;
  const filter = { spaceId: q.space, idContains: q.q, idIn: scope === null ? undefined : scopeParts(scope) };
  // One extra row tells whether another page follows.
  const banks = await s.store.listBanks(projectId, filter, {
    limit: limit + 1,
    after: decodeAfter(q.cursor),
    offset,
    pay: walkFare(s, projectId),
  });
  const page = banks.slice(0, limit);
  const items = await Promise.all(
    page.map(async (b) => {
      const profile = await bankProfile(s, b);
      return { ...profile, bank_id: profile.id, fact_count: profile.memory_count };
    }),
  );
  const last = page.at(-1);
  return {
    items,
    next_cursor: banks.length > limit && last ? encodeAfter(last.id) : null,
    total: await s.store.countBanks(projectId, filter, walkFare(s, projectId)),
    limit,
    offset,
  };
}
