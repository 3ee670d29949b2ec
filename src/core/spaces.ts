import { bankForWrite, bankProfile } from './banks.js';
import { AppError, invalid, notFound } from './errors.js';
import { checkSlug, orgSpaceOf } from './ids.js';
import type { Services } from './services.js';
import type { Space } from './types.js';

export async function createSpace(s: Services, projectId: string, input: { id: string; name: string }) {
  checkSlug('space id', input.id, 'id');
  const space = await s.store.createSpace(projectId, input);
  if (!space) throw new AppError('conflict', `space '${input.id}' already exists`);
  return space;
}

export async function requireSpace(s: Services, projectId: string, id: string): Promise<Space> {
  const space = await s.store.getSpace(projectId, id);
  if (!space) throw notFound(`space '${id}'`);
  return space;
}

export async function listSpaceBanks(s: Services, projectId: string, spaceId: string) {
  await requireSpace(s, projectId, spaceId);
  const banks = await s.store.listBanks(projectId, { spaceId });
  return Promise.all(banks.map((b) => bankProfile(s, b)));
}

/** Attaches a bank (created if new) to a space. A bank lives in at most one space. */
export async function attachBank(s: Services, projectId: string, spaceId: string, bankId: string) {
  await requireSpace(s, projectId, spaceId);
  if (orgSpaceOf(bankId) !== null) throw invalid('bank', 'an org bank belongs to its own space and cannot be moved');
  const bank = await bankForWrite(s, projectId, bankId);
  if (bank.space_id && bank.space_id !== spaceId) {
    throw new AppError('conflict', `bank '${bankId}' is already in space '${bank.space_id}'`);
  }
  if (bank.space_id !== spaceId) await s.store.setBankSpace(projectId, bankId, spaceId);
  return { space_id: spaceId, bank_id: bankId, attached: true };
}

/** Removes a bank from a space; its memories stay. */
export async function removeBank(s: Services, projectId: string, spaceId: string, bankId: string) {
  await requireSpace(s, projectId, spaceId);
  const bank = await s.store.getBank(projectId, bankId);
  if (!bank || bank.space_id !== spaceId) throw notFound(`bank '${bankId}' in space '${spaceId}'`);
  await s.store.setBankSpace(projectId, bankId, null);
  return { space_id: spaceId, bank_id: bankId, attached: false };
}

/** Deletes a space; its banks become unassigned and are never deleted. */
export async function deleteSpace(s: Services, projectId: string, spaceId: string) {
  const n = await s.store.deleteSpace(projectId, spaceId);
  if (n === null) throw notFound(`space '${spaceId}'`);
  return { deleted: true as const, id: spaceId, banks_unassigned: n };
}
