/**
 * A bank deleted while one of its jobs runs, then created again under the same id (issue 18): the
 * other kinds of job than Retain (bank-reborn-jobs). Written as the attack: instance B's worker
 * runs a consolidation, a re-embed, a re-encryption or a bank-index build of bank X, held inside
 * its slice after it read the old bank (or before or after a write); instance A deletes X and
 * creates it again; then B goes on, past the end of its slice's time. Nothing of the old bank may
 * reach the new one (rows, a data key, counters, the embedder, queued operations, a vector index
 * of its own), and the job ends with its bank, saying so. On PostgreSQL A and B
 * are two instances (each its own store and pool) on one database; on the embedded engine two
 * apps in one process over one database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { enqueueOperation, SLICE_MS } from '../../src/core/operations.js';
import { BANK_INDEX } from '../../src/core/recall/bank-index.js';
import { REEMBED } from '../../src/core/reembed.js';
import { REFRESH_MENTAL_MODEL } from '../../src/contract/mental-models.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { openPostgres } from '../../src/store/postgres.js';
import { bankIndexName } from '../../src/store/sql/bank-index.js';
import type { Store } from '../../src/store/store.js';
import { capturedLog } from '../helpers/captured-log.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { newMasterKey } from './encryption-helpers.js';

/** B's store methods a job's slice can be held in (before the call runs, or after it returns). */
const HELD = [
  'consolidationSources',
  'saveObservation',
  'listMemories',
  'convertMemories',
  'buildBankIndex',
  'nextMentalModelRefresh',
] as const;
type Held = (typeof HELD)[number];
type Hold = { method: Held; at: 'before' | 'after' };

for (const engine of ENGINES) {
  describe(`jobs of a bank deleted and created again write nothing into the new one (${engine})`, () => {
    let a: TestApp;
    let b: TestApp;
    let raw: Db;
    const logged: { msg: string; kind?: string; bank?: string }[] = [];
    /** The call B's store holds next: its method, side and bank, and the hold's two ends. */
    let armed: (Hold & { bank: string; entered: () => void; release: Promise<void> }) | undefined;

    /** `store` with each HELD method holding the call `armed` names (once). */
    const holding = (store: Store): Store => {
      const s = store as unknown as Record<Held, (...args: unknown[]) => Promise<unknown>>;
      for (const method of HELD) {
        const inner = s[method].bind(store);
        s[method] = async (...args: unknown[]) => {
          // Consolidation reads the memories a forget marked first (`redo`): held at its next read.
          const redo = (args[4] as { redo?: boolean } | undefined)?.redo;
          const hold = armed?.method === method && args[1] === armed.bank && !redo ? armed : undefined;
          if (!hold) return inner(...args);
          armed = undefined;
          const wait = async () => {
            hold.entered();
            await hold.release;
          };
          if (hold.at === 'before') await wait();
          const result = await inner(...args);
          if (hold.at === 'after') await wait();
          return result;
        };
      }
      return store;
    };

    before(async () => {
      const opened = await openTestDb(engine);
      const masterKey = newMasterKey();
      raw = opened.db;
      a = await testApp(engine, {
        store: Object.assign(storeOver(raw), { dispose: opened.dispose }),
        masterKey,
      });
      // On PostgreSQL, B is another instance: its own store and connection pool on the database.
      const url = (opened as { url?: string }).url;
      const other = url ? await openPostgres(url, { poolSize: 4 }) : null;
      b = await testApp(engine, {
        store: Object.assign(holding(storeOver(other ?? raw)), { dispose: async () => other?.close() }),
        masterKey,
      });
    });
    after(async () => {
      await b?.close();
      await a.close();
    });

    /** The bank's tables nothing of the old bank may reach. */
    const TABLES = [
      'memories',
      'entities',
      'memory_terms',
      'memory_entities',
      'documents',
      'operations',
      'bank_keys',
      'llm_requests',
      'webhook_deliveries',
    ];
    const count = async (table: string, bank: string) =>
      (
        await raw.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${table} WHERE project_id = 'default' AND bank_id = $1`,
          [bank],
        )
      )[0]!.n;

    /**
     * Bank `bank` with a few memories (none when `empty`; `config` applied), its job queued by
     * `queue`; B's worker runs it held at `hold` while A deletes the bank and creates it again
     * (then runs `reborn`), and past the end of its slice (SLICE_MS), so that a job checking its
     * slice's deadline before its next write yields there. Returns what the worker logged of the job.
     */
    async function attack(
      bank: string,
      kind: string,
      hold: Hold,
      queue: () => Promise<void>,
      setup: {
        config?: Record<string, unknown>;
        empty?: true;
        reborn?: () => Promise<void>;
        /** The worker's lease, short to have it lost while the job is held. */
        leaseMs?: number;
      } = {},
    ): Promise<string[]> {
      assert.ok([200, 201].includes((await a.call('PUT', bankPath(bank), { body: {} })).status));
      for (const [k, v] of Object.entries(setup.config ?? {})) {
        const cfg = await a.call('PATCH', bankPath(bank, '/config'), { body: { updates: { [k]: v } } });
        assert.equal(cfg.status, 200, `${k}: ${JSON.stringify(cfg.body)}`);
      }
      const items = ['Alice met Bob in Paris.', 'Alice met Bob in Paris again.', 'Carol flew to Rome.'].map(
        (content) => ({ content, document_id: 'old-doc', entities: [{ text: 'Old Entity' }] }),
      );
      if (!setup.empty) {
        const r = await a.call('POST', bankPath(bank, '/memories'), { body: { items } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      await queue();
      let entered: () => void = () => {};
      let release: () => void = () => {};
      const held = new Promise<void>((r) => (entered = r));
      armed = { ...hold, bank, entered, release: new Promise<void>((r) => (release = r)) };
      // This job's lines only: a line with no bank would count for every later test's.
      logged.length = 0;
      const log = capturedLog(logged);
      const ofJob = () =>
        logged
          .filter((l) => (l.bank ?? bank) === bank && l.kind === kind && l.msg !== 'operation waits its turn')
          .map((l) => l.msg);
      /** The rows of the new bank A wrote itself. */
      const own = new Map<string, number>();
      const worker = startWorker(b.services, log, {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
        ...(setup.leaseMs && { leaseMs: setup.leaseMs }),
      });
      try {
        await held;
        assert.equal((await a.call('DELETE', bankPath(bank))).status, 200);
        assert.ok([200, 201].includes((await a.call('PUT', bankPath(bank), { body: {} })).status));
        await setup.reborn?.();
        for (const table of TABLES) own.set(table, await count(table, bank));
        await new Promise((r) => setTimeout(r, SLICE_MS));
        release();
        await until(
          async () => ofJob(),
          (l) => l.length > 0,
        ).catch((err) => {
          throw new Error(`${err.message}: ${JSON.stringify(logged)}`);
        });
      } finally {
        release();
        await worker.stop();
      }
      for (const table of TABLES)
        assert.equal(await count(table, bank), own.get(table), `${table} of the new bank '${bank}'`);
      const row = (
        await raw.query<{ memory_count: number; embedder: string | null }>(
          `SELECT memory_count, embedder FROM banks WHERE project_id = 'default' AND id = $1`,
          [bank],
        )
      )[0]!;
      assert.deepEqual({ ...row }, { memory_count: 0, embedder: null });
      return ofJob();
    }

    const consolidate = (bank: string) => async () => {
      assert.equal((await a.call('POST', bankPath(bank, '/consolidate'))).status, 200);
    };

    // Past its slice, it yields before it writes: that yield went unnoticed (its row went with the
    // bank), so the job ended without a word and this test waited forever. Now the yield is fenced.
    test('a consolidation held after it read its memories', async () => {
      const hold = { method: 'consolidationSources', at: 'after' } as const;
      const done = await attack('reborn-c', 'consolidate', hold, consolidate('reborn-c'));
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    test('a consolidation held before it saves a step', async () => {
      const hold = { method: 'saveObservation', at: 'before' } as const;
      const done = await attack('reborn-s', 'consolidate', hold, consolidate('reborn-s'));
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    // Its last read found nothing: it goes on to what ends a run, a webhook event and the mental
    // models set to refresh after a consolidation, single statements that were not fenced.
    const nothingLeft = (bank: string, reborn: () => Promise<void>) =>
      attack(bank, 'consolidate', { method: 'consolidationSources', at: 'after' }, consolidate(bank), {
        empty: true,
        reborn,
      });

    test('a consolidation held after it found nothing to do, a webhook on the new bank', async () => {
      const done = await nothingLeft('reborn-w', async () => {
        const body = { url: 'http://93.184.216.34/hook', event_types: ['consolidation.completed'] };
        assert.equal((await a.call('POST', bankPath('reborn-w', '/webhooks'), { body })).status, 201);
      });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    test('a consolidation held after it found nothing to do, a mental model on the new bank', async () => {
      const model = { id: 'm', name: 'm', source_query: 'q', tags: [], max_tokens: 500 };
      const trigger = { refresh_after_consolidation: true };
      const done = await nothingLeft('reborn-m', async () => {
        assert.ok(await a.services.store.insertMentalModel('default', 'reborn-m', { ...model, trigger }, 50));
      });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
      const m = await a.services.store.getMentalModel('default', 'reborn-m', 'm');
      assert.equal(m?.refresh_requested_at, null, "the new bank's mental model was marked for refresh");
    });

    const model = { id: 'm', name: 'm', source_query: 'q', tags: [], max_tokens: 500 };
    /** Bank `bank`'s mental model 'm' (with `trigger`), its refresh queued, held at `hold`. */
    const refresh = (bank: string, hold: Hold, trigger = {}, setup: Parameters<typeof attack>[4] = {}) =>
      attack(
        bank,
        REFRESH_MENTAL_MODEL,
        hold,
        async () => {
          const r = await a.call('POST', bankPath(bank, '/mental-models'), { body: { ...model, trigger } });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        },
        { config: off, ...setup },
      );

    // Its last read finds nothing to refresh in the new bank: it completed, writing nothing, and
    // the worker said 'operation completed' of an operation gone with its bank.
    test('a mental-model refresh held before it picks its model completes with nothing to do', async () => {
      const done = await refresh('reborn-n', { method: 'nextMentalModelRefresh', at: 'before' });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    // Its lease, renewed on a row gone with the bank, is lost; it stopped and the worker said it
    // would retry.
    test('a mental-model refresh held until its lease is lost', async () => {
      const hold = { method: 'nextMentalModelRefresh', at: 'after' } as const;
      const done = await refresh('reborn-l', hold, {}, { leaseMs: 150 });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    // Its Reflect cannot succeed (a response_schema with no language model): the error it records
    // on its model was a single statement, not fenced, and landed on the new bank's model 'm'.
    test("a mental-model refresh held after it picked its model, failing on the new bank's model", async () => {
      const bank = 'reborn-r';
      const shaped = { response_schema: { type: 'object', properties: { a: { type: 'string' } } } };
      const hold = { method: 'nextMentalModelRefresh', at: 'after' } as const;
      const done = await refresh(bank, hold, shaped, {
        reborn: async () => {
          assert.ok(
            await a.services.store.insertMentalModel('default', bank, { ...model, trigger: shaped }, 50),
          );
        },
      });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
      const m = await a.services.store.getMentalModel('default', bank, 'm');
      assert.equal(m?.refresh_error, null, "the old bank's refresh error reached the new bank's model");
    });

    test('a re-embed held after it read a page of memories', async () => {
      const hold = { method: 'listMemories', at: 'after' } as const;
      const queue = () => enqueueOperation(a.services, 'default', 'reborn-e', REEMBED, {}).then(() => {});
      const done = await attack('reborn-e', REEMBED, hold, queue, { config: off });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    const off = { enable_observations: false };
    const encrypted = { ...off, encryption: 'managed' };
    test('a re-encryption held before it converts a batch', async () => {
      // Switching the bank's encryption queues its re-encryption.
      const hold = { method: 'convertMemories', at: 'before' } as const;
      const done = await attack('reborn-k', 'reencrypt', hold, async () => {}, { config: encrypted });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    // The consolidation's case in another kind: past its slice, it yields after its last write.
    test('a re-encryption held after it converted a batch', async () => {
      const hold = { method: 'convertMemories', at: 'after' } as const;
      // Switched once the memories are stored in plain text, so that the batch converts them.
      const queue = async () => {
        const body = { updates: { encryption: 'managed' } };
        assert.equal((await a.call('PATCH', bankPath('reborn-a', '/config'), { body })).status, 200);
      };
      const done = await attack('reborn-a', 'reencrypt', hold, queue, { config: off });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
    });

    test('a bank-index build held before it creates the index', async () => {
      const dims = a.services.embedder.dimensions;
      const hold = { method: 'buildBankIndex', at: 'before' } as const;
      const queue = () =>
        enqueueOperation(a.services, 'default', 'reborn-i', BANK_INDEX, { dims }).then(() => {});
      const done = await attack('reborn-i', BANK_INDEX, hold, queue, { config: off });
      assert.deepEqual(done, ['operation ended: its bank was deleted']);
      const index = await raw.query('SELECT 1 FROM pg_class WHERE relname = $1', [
        bankIndexName('default', 'reborn-i', dims),
      ]);
      assert.equal(index.length, 0, 'the old bank built an index over the new one');
    });
  });
}
