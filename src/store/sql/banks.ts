import type { Bank, BankCounts, Space } from '../records.js';
import { notFound } from '../../contract/errors.js';
import type { Db } from '../db.js';
import { BankGone, fenceOf, fencedWrite } from '../fence.js';
import { type BankIdIn, bankInClause } from './filters.js';
import {
  countRows,
  groupRows,
  type OrderKey,
  type PayHops,
  rowsIn,
  skipRows,
  walkPage,
} from './offset-walk.js';

/** Spaces and the banks in them: a bank's row, its config, its counts, and its deletion. */
export interface BankStore {
  createSpace(projectId: string, s: { id: string; name: string }): Promise<Space | null>;
  getSpace(projectId: string, id: string): Promise<Space | null>;
  /**
   * The project's spaces; with `idIn` (a bank-scoped key) only the spaces holding one of those
   * banks, each counting only those (counted in bounded hops over the project's banks, each past
   * the first paid through `pay`).
   */
  listSpaces(projectId: string, idIn?: BankIdIn, pay?: PayHops): Promise<Space[]>;
  /** Unassigns the space's banks (never deletes them); returns how many, or null if no such space. */
  deleteSpace(projectId: string, id: string): Promise<number | null>;
  getBank(projectId: string, id: string): Promise<Bank | null>;
  /**
   * Creates the bank if missing (with the given space and org flag) and returns it; a new bank
   * whose space does not exist (deleted meanwhile) is a not_found error.
   */
  ensureBank(
    projectId: string,
    id: string,
    init: { spaceId?: string | null; isOrgBank?: boolean },
  ): Promise<Bank>;
  /**
   * Banks of the project (optionally of one space), oldest first; with `page`, ordered by id and
   * keyset-paged: at most `limit` banks whose id sorts after `after`.
   */
  listBanks(
    projectId: string,
    filter: BankFilter,
    page?: { limit: number; after?: string; offset?: number; pay?: PayHops },
  ): Promise<Bank[]>;
  /** How many banks `listBanks` would list with this filter and no page, in bounded hops. */
  countBanks(projectId: string, filter: BankFilter, pay?: PayHops): Promise<number>;
  /**
   * Puts the bank in the space if it is in no space yet, holding the space row meanwhile: a
   * concurrent deletion of the space waits and then unassigns it, so a bank never points at a
   * deleted space. The outcome: attached (or was there already), no such space or bank, or the
   * other space the bank is in.
   */
  attachBankToSpace(
    projectId: string,
    bankId: string,
    spaceId: string,
  ): Promise<{ status: 'attached' | 'no_space' | 'no_bank' } | { status: 'elsewhere'; spaceId: string }>;
  /** Takes the bank out of the space if it is in it at that moment; false when it is not. */
  detachBankFromSpace(projectId: string, bankId: string, spaceId: string): Promise<boolean>;
  /**
   * Sets the bank's name, mission or embedder in one statement. `embedderIfUnset`: records the
   * embedder only when the bank has none yet (first vectors), so a concurrent re-embed's value
   * is never overwritten by a stale read.
   */
  updateBank(
    projectId: string,
    bankId: string,
    patch: {
      name?: string | null;
      mission?: string | null;
      embedder?: string;
      embedderIfUnset?: string;
    },
  ): Promise<Bank | null>;
  /**
   * Merges config changes into the bank's stored overrides in the database, under the bank's
   * row lock: a key with a value is set, a key with `null` is removed, every other key is kept
   * as it is in the row at that moment — concurrent updates of other keys all survive. Returns
   * the overrides as they were just before (read under the lock, so a side effect of a change is
   * decided from the real transition) and the bank after, or null if there is no such bank.
   */
  updateBankConfig(
    projectId: string,
    bankId: string,
    changes: Record<string, unknown>,
  ): Promise<{ before: Record<string, unknown>; bank: Bank } | null>;
  bankCounts(projectId: string, bankId: string): Promise<BankCounts>;
  /** Deletes the bank and all its data; returns the number of memories deleted, or null if absent. */
  deleteBank(projectId: string, bankId: string): Promise<number | null>;
}

/** Which banks a listing keeps: one space's; those whose id contains `idContains` (any case). */
export interface BankFilter {
  spaceId?: string;
  idContains?: string;
  /** A bank-scoped key's banks (core/bank-scope.ts): these exact ids and ids with these prefixes. */
  idIn?: BankIdIn;
}

/** The WHERE clause of a bank listing, its parameters after `projectId`. */
function bankWhere(projectId: string, filter: BankFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [projectId];
  return { where: `project_id = $1${bankFilter(filter, params)}`, params };
}

/** The filter's conditions (` AND …`), their parameters pushed to `params`. */
function bankFilter(filter: BankFilter, params: unknown[]): string {
  let where = '';
  if (filter.spaceId !== undefined) {
    params.push(filter.spaceId);
    where += ` AND space_id = $${params.length}`;
  }
  if (filter.idContains) {
    // A literal substring: LIKE's wildcards and escape in the text match themselves.
    params.push(`%${filter.idContains.replace(/[\\%_]/g, '\\$&')}%`);
    where += ` AND id ILIKE $${params.length}`;
  }
  if (filter.idIn) where += ` AND ${bankInClause('id', filter.idIn, params)}`;
  return where;
}

/** The bank listing's order (the primary key). */
const BY_ID: OrderKey[] = [{ expr: 'id', type: 'text' }];

/** A space's `bank_count` is a counter its banks' triggers keep (migration 47). */
const SPACE_SELECT = 'SELECT s.id, s.name, s.created_at, s.bank_count FROM spaces s';

const BANK_COLUMNS =
  'project_id, id, space_id, is_org_bank, name, mission, config, embedder, memory_count, term_total, created_at, updated_at, llm_input_tokens, llm_output_tokens, generation::float8 AS generation';

/** Spaces and banks. */
export function bankQueries(db: Db): BankStore {
  return {
    async createSpace(projectId, s) {
      const rows = await db.query<{ id: string }>(
        'INSERT INTO spaces (project_id, id, name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id',
        [projectId, s.id, s.name],
      );
      if (!rows[0]) return null;
      const created = await db.query<Space>(`${SPACE_SELECT} WHERE s.project_id = $1 AND s.id = $2`, [
        projectId,
        s.id,
      ]);
      return created[0]!;
    },
    async getSpace(projectId, id) {
      const rows = await db.query<Space>(`${SPACE_SELECT} WHERE s.project_id = $1 AND s.id = $2`, [
        projectId,
        id,
      ]);
      return rows[0] ?? null;
    },
    async listSpaces(projectId, idIn, pay) {
      if (!idIn)
        return db.query<Space>(`${SPACE_SELECT} WHERE s.project_id = $1 ORDER BY s.created_at, s.id`, [
          projectId,
        ]);
      // The key's banks by space, counted in bounded hops over the project's banks.
      const counted = await groupRows(
        db,
        { from: 'banks', where: 'project_id = $1', params: [projectId], order: BY_ID },
        {
          group: { space: 'space_id' },
          aggregates: { n: { fn: 'count' } },
          filter: (params) => `space_id IS NOT NULL AND ${bankInClause('id', idIn, params)}`,
        },
        pay,
      );
      const counts = new Map(counted.map((c) => [c.space as string, c.n as number]));
      const spaces = await db.query<Space>(
        `${SPACE_SELECT} WHERE s.project_id = $1 AND s.id = ANY($2::text[]) ORDER BY s.created_at, s.id`,
        [projectId, [...counts.keys()]],
      );
      return spaces.map((sp) => ({ ...sp, bank_count: counts.get(sp.id)! }));
    },
    async deleteSpace(projectId, id) {
      return db.transaction(async (tx) => {
        const gone = await tx.query('DELETE FROM spaces WHERE project_id = $1 AND id = $2 RETURNING id', [
          projectId,
          id,
        ]);
        if (gone.length === 0) return null;
        const banks = await tx.query(
          'UPDATE banks SET space_id = NULL, updated_at = now(), generation = generation + 1 WHERE project_id = $1 AND space_id = $2 RETURNING id',
          [projectId, id],
        );
        return banks.length;
      });
    },
    async getBank(projectId, id) {
      const rows = await db.query<Bank>(
        `SELECT ${BANK_COLUMNS} FROM banks WHERE project_id = $1 AND id = $2`,
        [projectId, id],
      );
      return rows[0] ?? null;
    },
    async ensureBank(projectId, id, init) {
      // A job runs for a bank it was queued in: its bank gone, it never creates one of the same id.
      if (fenceOf(projectId, id)) throw new BankGone(id);
      // A new bank joins its space only while the space exists, holding the space row until the
      // statement commits: a concurrent deleteSpace waits and then unassigns it with the others.
      const rows = await db.query<Bank>(
        `INSERT INTO banks (project_id, id, space_id, is_org_bank)
         SELECT $1, $2, $3::text, $4
         WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM spaces WHERE project_id = $1 AND id = $3::text FOR SHARE)
         ON CONFLICT (project_id, id) DO UPDATE SET id = banks.id
         RETURNING ${BANK_COLUMNS}`,
        [projectId, id, init.spaceId ?? null, init.isOrgBank ?? false],
      );
      if (rows[0]) return rows[0];
      const existing = await db.query<Bank>(
        `SELECT ${BANK_COLUMNS} FROM banks WHERE project_id = $1 AND id = $2`,
        [projectId, id],
      );
      if (existing[0]) return existing[0];
      throw notFound(`space '${init.spaceId}'`);
    },
    async listBanks(projectId, filter, page) {
      const { params, where: base } = bankWhere(projectId, filter);
      let where = base;
      const select = `SELECT ${BANK_COLUMNS} FROM banks WHERE`;
      if (!page) return db.query<Bank>(`${select} ${where} ORDER BY created_at, id`, params);
      // A space or a text to find in ids: found in bounded hops over the project's banks, the
      // filter applied in each (a text no id has reads no more per statement), then read by id.
      const walked = filter.spaceId !== undefined || !!filter.idContains;
      const kept: unknown[] = [projectId];
      let inProject = 'project_id = $1';
      if (page.after !== undefined) {
        for (const list of [params, kept]) list.push(page.after);
        where += ` AND id > $${params.length}`;
        inProject += ` AND id > $${kept.length}`;
      }
      if (walked) {
        const listing = { from: 'banks', where: inProject, params: kept, order: BY_ID };
        const filtered = (p: unknown[]) => `true${bankFilter(filter, p)}`;
        const ids = await walkPage(db, listing, filtered, page.offset ?? 0, page.limit, page.pay);
        const byIds: unknown[] = [projectId];
        return db.query<Bank>(
          `SELECT ${BANK_COLUMNS} FROM banks WHERE project_id = $1${rowsIn(BY_ID, ids, byIds)} ORDER BY id`,
          byIds,
        );
      }
      where += await skipRows(db, { from: 'banks', where, params, order: BY_ID }, page.offset ?? 0, page.pay);
      params.push(page.limit);
      return db.query<Bank>(`${select} ${where} ORDER BY id LIMIT $${params.length}`, params);
    },
    async countBanks(projectId, filter, pay) {
      const listing = { from: 'banks', where: 'project_id = $1', params: [projectId], order: BY_ID };
      return countRows(db, listing, (params) => `true${bankFilter(filter, params)}`, pay);
    },
    async attachBankToSpace(projectId, bankId, spaceId) {
      return db.transaction(async (tx) => {
        // The space row is held (shared) until commit: deleteSpace deletes it first, so it either
        // runs before (no space here) or waits and then unassigns this bank with the others.
        const space = await tx.query('SELECT 1 FROM spaces WHERE project_id = $1 AND id = $2 FOR SHARE', [
          projectId,
          spaceId,
        ]);
        if (space.length === 0) return { status: 'no_space' as const };
        // Compare-and-set: only a bank in no space moves, whatever an earlier read said.
        const moved = await tx.query(
          `UPDATE banks SET space_id = $3, updated_at = now(), generation = generation + 1
           WHERE project_id = $1 AND id = $2 AND space_id IS NULL RETURNING 1`,
          [projectId, bankId, spaceId],
        );
        if (moved.length) return { status: 'attached' as const };
        const bank = await tx.query<{ space_id: string | null }>(
          'SELECT space_id FROM banks WHERE project_id = $1 AND id = $2',
          [projectId, bankId],
        );
        if (!bank[0]) return { status: 'no_bank' as const };
        return bank[0].space_id === spaceId
          ? { status: 'attached' as const }
          : { status: 'elsewhere' as const, spaceId: bank[0].space_id! };
      });
    },
    async detachBankFromSpace(projectId, bankId, spaceId) {
      const rows = await db.query(
        `UPDATE banks SET space_id = NULL, updated_at = now(), generation = generation + 1
         WHERE project_id = $1 AND id = $2 AND space_id = $3 RETURNING 1`,
        [projectId, bankId, spaceId],
      );
      return rows.length > 0;
    },
    async updateBank(projectId, bankId, patch) {
      const sets: string[] = [];
      const params: unknown[] = [projectId, bankId];
      const set = (col: string, v: unknown) => {
        params.push(v);
        sets.push(`${col} = $${params.length}`);
      };
      if (patch.name !== undefined) set('name', patch.name);
      if (patch.mission !== undefined) set('mission', patch.mission);
      if (patch.embedder !== undefined) set('embedder', patch.embedder);
      // Compare-and-set in the statement itself: a value another writer stored meanwhile stays.
      if (patch.embedderIfUnset !== undefined) {
        params.push(patch.embedderIfUnset);
        sets.push(`embedder = coalesce(embedder, $${params.length})`);
      }
      const rows = await fencedWrite(db, projectId, bankId, (q) =>
        q.query<Bank>(
          `UPDATE banks SET ${[...sets, 'updated_at = now()', 'generation = generation + 1'].join(', ')}
           WHERE project_id = $1 AND id = $2 RETURNING ${BANK_COLUMNS}`,
          params,
        ),
      );
      return rows[0] ?? null;
    },
    async updateBankConfig(projectId, bankId, changes) {
      // No prototype: a key is only ever an own property, whatever its name.
      const set: Record<string, unknown> = Object.create(null);
      const unset: string[] = [];
      for (const [k, v] of Object.entries(changes)) {
        if (v === null) unset.push(k);
        else set[k] = v;
      }
      return db.transaction(async (tx) => {
        // The row lock orders concurrent config writers; `before` is the config as this writer
        // changes it, never a stale read.
        const locked = await tx.query<{ config: Record<string, unknown> }>(
          'SELECT config FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE',
          [projectId, bankId],
        );
        if (!locked[0]) return null;
        const rows = await tx.query<Bank>(
          `UPDATE banks SET config = (config - $3::text[]) || $4::jsonb, updated_at = now(),
             generation = generation + 1
           WHERE project_id = $1 AND id = $2 RETURNING ${BANK_COLUMNS}`,
          [projectId, bankId, unset, JSON.stringify(set)],
        );
        const bank = rows[0]!;
        // An archive a transfer export wrote is in the form the bank had: a plain one must not
        // outlive a switch to encryption (nor a sealed one its key), so none outlives a switch.
        if ((locked[0].config.encryption === 'managed') !== (bank.config.encryption === 'managed'))
          await tx.query('DELETE FROM transfer_archives WHERE project_id = $1 AND bank_id = $2', [
            projectId,
            bankId,
          ]);
        return { before: locked[0].config, bank };
      });
    },
    async bankCounts(projectId, bankId) {
      const rows = await db.query<{ memory_count: number; entity_count: number; document_count: number }>(
        // The bank's counters, kept in the writes' transactions (migration 46): no count per profile.
        'SELECT memory_count, entity_count, document_count FROM banks WHERE project_id = $1 AND id = $2',
        [projectId, bankId],
      );
      return rows[0] ?? { memory_count: 0, entity_count: 0, document_count: 0 };
    },
    async deleteBank(projectId, bankId) {
      return db.transaction(async (tx) => {
        const bank = await tx.query<{ memory_count: number }>(
          'SELECT memory_count FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE',
          [projectId, bankId],
        );
        if (!bank[0]) return null;
        await tx.query('DELETE FROM memory_entities WHERE project_id = $1 AND bank_id = $2', [
          projectId,
          bankId,
        ]);
        await tx.query('DELETE FROM memory_terms WHERE project_id = $1 AND bank_id = $2', [
          projectId,
          bankId,
        ]);
        await tx.query('DELETE FROM banks WHERE project_id = $1 AND id = $2', [projectId, bankId]);
        // Kept Idempotency-Key answers about the bank go with it (they may hold its text).
        await tx.query('DELETE FROM idempotency WHERE project_id = $1 AND bank_id = $2', [projectId, bankId]);
        return bank[0].memory_count;
      });
    },
  };
}
