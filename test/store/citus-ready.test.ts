/**
 * Ready to outgrow one PostgreSQL: a distributed PostgreSQL (Citus) spreads bank data by bank
 * only if every table of bank data carries the bank in its primary key, every unique index and
 * foreign key among them includes it, and the statements of the request path each name one bank.
 * This file checks the migrated schema (both engines) and the store's statements (read from
 * src/store/sql), and lists each exception with its reason; docs/deploy.md holds the plan.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import {
  bankTables,
  readSchema,
  type Schema,
  schemaGaps,
  unscopedReferences,
  unscopedStatements,
} from './bank-scope.js';
import { storeStatements } from './statements.js';

/** Tables with a `bank_id` column that are not bank data, and why. */
const TABLE_EXCEPTIONS: Record<string, string> = {
  audit:
    "a project's trail: most entries name no bank (keys, projects, refused requests), so it is keyed " +
    'and distributed by project; bank_id is an attribute to filter on',
  idempotency:
    'an Idempotency-Key belongs to a caller of a project, not to a bank; bank_id names the bank whose ' +
    'data key seals the kept answer',
  receipts:
    "a forget's receipt outlives the bank it is about (that is its point); bank_id is whose readers may " +
    'fetch it, so it is keyed and distributed by project',
};

/**
 * Store methods whose statements reach bank data without naming one bank: how many statements,
 * and why. None is on the path of a Retain, Recall or Reflect request except where the reason
 * says so; under distribution each is a multi-shard statement (docs/deploy.md).
 */
const STATEMENT_EXCEPTIONS: Record<string, { statements: number; reason: string }> = {
  // Helpers of a forget: they run the statement their caller passes, and every caller names one
  // bank (`project_id = $1 AND bank_id = $2`).
  'receipts.ts:count': { statements: 1, reason: "runs its caller's count, of one bank (a forget)" },
  'curation.ts:(top level)': {
    statements: 1,
    reason: '`CONSOLIDATED`: a condition over alias `m`, whose statements name one bank',
  },
  'receipts.ts:(top level)': {
    statements: 1,
    reason: "`changed`: runs its caller's delete or update, of one bank, and counts its rows (a forget)",
  },
  'bank-index.ts:wantedBankIndex': {
    statements: 1,
    reason:
      "the bank's share of all vectors (sum over every bank) decides whether an index of its own pays; " +
      'after a Retain into a bank past the exact-search size. Distributed, the share that matters is of its shard',
  },
  'bank-index.ts:buildBankIndex': {
    statements: 1,
    reason: 'DDL composed in SQL (format): a partial index WHERE project_id = … AND bank_id = …, one bank',
  },
  'banks.ts:deleteSpace': { statements: 1, reason: 'unassigns every bank of the space (management)' },
  'banks.ts:listBanks': {
    statements: 3,
    reason: "lists a project's banks, all, keyset-paged or a filtered page read by its ids (management)",
  },
  'upkeep.ts:memoryPlace': {
    statements: 1,
    reason:
      "Hindsight's GET /chunks/{chunk_id} names no bank: the memory is looked for among the project's banks (browsing, not the request path of Retain, Recall or Reflect)",
  },
  'encryption.ts:listBankKeys': {
    statements: 1,
    reason: 'every data key: the start-up master key check, rotation',
  },
  'encryption.ts:rewrapBankKeys': {
    statements: 1,
    reason: 'master key rotation: the named banks in one statement',
  },
  'encryption.ts:countUnkeyedEncryptedBanks': { statements: 1, reason: 'start-up check over every bank' },
  'limits.ts:chargeItems': {
    statements: 1,
    reason:
      "the stored_memories quota sums memory_count over the project's banks, on every Retain of a project " +
      'with that quota; a per-project counter would make it single-shard',
  },
  'limits.ts:checkStoredQuotaIn': {
    statements: 1,
    reason:
      'the same sum again inside each Retain write of a project with that quota, under the project lock, ' +
      'so that concurrent Retains cannot pass the quota together',
  },
  'limits.ts:projectUsage': { statements: 1, reason: "the project's usage (stored memories over its banks)" },
  'operations.ts:claimOperation': {
    statements: 1,
    reason:
      'finds the banks with runnable work, fairly across projects and banks (a worker poll, not a request); ' +
      'the claim that follows names one bank (claimIn)',
  },
  'operations.ts:countPendingOperations': { statements: 1, reason: 'the queue depth gauge of /metrics' },
  'webhooks.ts:claimWebhookDelivery': {
    statements: 1,
    reason:
      'finds the projects with due webhook deliveries, fairly across projects (a worker poll, not a ' +
      'request); what follows (recording the attempt) names the bank',
  },
  'webhooks.ts:claimDeliveryIn': {
    statements: 1,
    reason:
      "claims a project's (or, when every candidate is taken, any project's) next due delivery, of any " +
      'of its banks (a worker poll, not a request)',
  },
  'transfer-archives.ts:deleteExpiredArchives': {
    statements: 1,
    reason: "the worker's sweep of expired export archives, every bank's at once; never on a request's path",
  },
  'search.ts:maintainStatistics': {
    statements: 1,
    reason: 'planner statistics: rows analysed against memories stored',
  },
  'tenancy.ts:deleteProject': {
    statements: 1,
    reason: "deletes the project's banks (then every table keyed by project, named at run time)",
  },
};

for (const engine of ENGINES) {
  describe(`schema ready to distribute by bank (${engine})`, () => {
    let schema: Schema;
    let dispose: () => Promise<void>;
    before(async () => {
      const opened = await openTestDb(engine);
      dispose = opened.dispose;
      schema = await readSchema(opened.db);
    });
    after(() => dispose());

    test('every table of bank data has (project_id, bank_id) in its key, unique indexes and foreign keys', () => {
      assert.ok(bankTables(schema).length >= 10, `bank tables: ${bankTables(schema).join(', ')}`);
      const exempt = (gap: string) =>
        Object.keys(TABLE_EXCEPTIONS).some((t) => gap.startsWith(`${t}: has bank_id,`));
      const gaps = schemaGaps(schema);
      assert.deepEqual(
        gaps.filter((g) => !exempt(g)),
        [],
      );
      // Each exception is still one: a table fixed (or dropped) leaves the list.
      for (const table of Object.keys(TABLE_EXCEPTIONS)) {
        assert.ok(
          gaps.some((g) => g.startsWith(`${table}: has bank_id,`)),
          `${table} needs no exception`,
        );
      }
    });

    test('docs/deploy.md places every table of the schema exactly once', () => {
      const doc = readFileSync(join(import.meta.dirname, '../../docs/deploy.md'), 'utf8');
      const section = doc.slice(doc.indexOf('### Where each table goes'));
      const table = section.slice(0, section.indexOf('\n\n', section.indexOf('|')));
      const placed = [...table.matchAll(/^\| ([^|]+)\|/gm)].flatMap((row) =>
        [...row[1]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!),
      );
      assert.deepEqual([...placed].sort(), [...schema.columns.keys()].sort());
    });
  });
}

test('the store statements that reach bank data without naming a bank are the listed ones', async () => {
  const opened = await openTestDb('pglite');
  try {
    const banked = bankTables(await readSchema(opened.db));
    const statements = storeStatements();
    assert.ok(statements.length > 150, `only ${statements.length} statements read from src/store/sql`);
    const expected = Object.fromEntries(
      Object.entries(STATEMENT_EXCEPTIONS).map(([k, v]) => [k, v.statements]),
    );
    assert.deepEqual(unscopedStatements(statements, banked), expected);
  } finally {
    await opened.dispose();
  }
});

test('the checks catch what they are for: a key without the bank, a statement over every bank', () => {
  const planted: Schema = {
    columns: new Map([
      ['banks', ['project_id', 'id']],
      ['notes', ['project_id', 'bank_id', 'id']],
      ['memories', ['project_id', 'bank_id', 'id', 'text']],
    ]),
    primaryKeys: new Map([
      ['banks', ['project_id', 'id']],
      ['notes', ['project_id', 'id']],
      ['memories', ['project_id', 'bank_id', 'id']],
    ]),
    foreignKeys: [
      {
        table: 'memories',
        columns: ['project_id', 'bank_id'],
        references: 'banks',
        referenced: ['project_id', 'id'],
      },
      {
        table: 'memories',
        columns: ['project_id', 'id'],
        references: 'banks',
        referenced: ['project_id', 'id'],
      },
    ],
    uniques: [{ table: 'memories', index: 'memories_text', columns: ['project_id', 'text'] }],
  };
  assert.deepEqual(schemaGaps(planted), [
    'notes: has bank_id, primary key (project_id, id) lacks it',
    'memories: unique index memories_text (project_id, text) lacks the bank',
    'memories: foreign key (project_id, id) → banks (project_id, id) does not match the bank',
  ]);
  const banked = ['banks', 'memories', 'entities'];
  assert.deepEqual(unscopedReferences('SELECT * FROM memories WHERE project_id = $1', banked), [
    'FROM memories',
  ]);
  assert.deepEqual(
    unscopedReferences(
      `SELECT m.id, (SELECT sum(memory_count) FROM banks) FROM memories m
       JOIN entities e ON e.project_id = m.project_id AND e.bank_id = m.bank_id
       WHERE m.project_id = $1 AND m.bank_id = $2`,
      banked,
    ),
    ['FROM banks'],
  );
  assert.deepEqual(
    unscopedReferences('UPDATE banks SET name = $3 WHERE project_id = $1 AND id = $2', banked),
    [],
  );
  assert.deepEqual(
    unscopedReferences('INSERT INTO memories (project_id, bank_id, id) VALUES ($1, $2, $3)', banked),
    [],
  );
  assert.deepEqual(unscopedReferences('INSERT INTO memories (project_id, id) VALUES ($1, $3)', banked), [
    'INTO memories',
  ]);
});
