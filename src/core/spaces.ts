import { type BankScope, scopeParts } from './bank-scope.js';
import { bankForWrite, bankProfile } from './banks.js';
import { AppError, invalid, notFound } from './errors.js';
import { checkSlug, orgSpaceOf } from './ids.js';
import type { Deps } from './services.js';
import type { BankStore, LimitStore } from '../store/store.js';
import { walkFare } from './budgets.js';
import type { Space } from './types.js';

export async function createSpace(
  s: Deps<BankStore>,
  projectId: string,
  input: { id: string; name: string },
) {
  checkSlug('space id', input.id, 'id');
  const space = await s.store.createSpace(projectId, input);
  if (!space) throw new AppError('conflict', `space '${input.id}' already exists`);
  return space;
}

export async function requireSpace(s: Deps<BankStore>, projectId: string, id: string): Promise<Space> {
  const space = await s.store.getSpace(projectId, id);
  if (!space) throw notFound(`space '${id}'`);
  return space;
}

/**
 * The project's spaces. A bank-scoped key sees only the spaces holding one of its banks, each
 * counting only its banks: it learns nothing of spaces and banks beyond its reach.
 */
export function listSpaces(
  s: Deps<BankStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  scope: BankScope = null,
) {
  if (scope === null) return s.store.listSpaces(projectId);
  return s.store.listSpaces(projectId, scopeParts(scope), walkFare(s, projectId));
}

/**
 * The banks of a space. For a bank-scoped key only its banks, and a space holding none of them
 * is not found, as a space that does not exist.
 */
export async function listSpaceBanks(
  s: Deps<BankStore>,
  projectId: string,
  spaceId: string,
  scope: BankScope = null,
) {
  if (scope === null) await requireSpace(s, projectId, spaceId);
  const banks = await s.store.listBanks(projectId, {
    spaceId,
    idIn: scope === null ? undefined : scopeParts(scope),
  });
  if (scope !== null && banks.length === 0) throw notFound(`space '${spaceId}'`);
  return Promise.all(banks.map((b) => bankProfile(s, b)));
}

/** Attaches a bank (created if new) to a space. A bank lives in at most one space. */
export async function attachBank(s: Deps<BankStore>, projectId: string, spaceId: string, bankId: string) {
  await requireSpace(s, projectId, spaceId);
  if (orgSpaceOf(bankId) !== null)
    throw invalid('bank', 'an org bank belongs to its own space and cannot be moved');
  await bankForWrite(s, projectId, bankId);
  // Decided in the database, not from the bank as read above: of concurrent attaches to
  // different spaces exactly one wins, and a space deleted meanwhile takes the bank with it.
  const r = await s.store.attachBankToSpace(projectId, bankId, spaceId);
  if (r.status === 'no_space') throw notFound(`space '${spaceId}'`);
  if (r.status === 'no_bank') throw notFound(`bank '${bankId}'`);
  if (r.status === 'elsewhere') {
    throw new AppError('conflict', `bank '${bankId}' is already in space '${r.spaceId}'`);
  }
  return { space_id: spaceId, bank_id: bankId, attached: true };
}

/** Removes a bank from a space; its memories stay. */
export async function removeBank(s: Deps<BankStore>, projectId: string, spaceId: string, bankId: string) {
  await requireSpace(s, projectId, spaceId);
  // Only while it is in this space: a late detach never takes it out of one it moved to since.
  if (!(await s.store.detachBankFromSpace(projectId, bankId, spaceId))) {
    throw notFound(`bank '${bankId}' in space '${spaceId}'`);
  }
  return { space_id: spaceId, bank_id: bankId, attached: false };
}

/** Deletes a space; its banks become unassigned and are never deleted. */
export async function deleteSpace(s: Deps<BankStore>, projectId: string, spaceId: string) {
  const n = await s.store.deleteSpace(projectId, spaceId);
  if (n === null) throw notFound(`space '${spaceId}'`);
  return { deleted: true as const, id: spaceId, banks_unassigned: n };
}
