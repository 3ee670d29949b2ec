/**
 * A bank deleted while one of its jobs runs, then created again under the same id (issue 18).
 * Written as the attack: instance B's worker runs a queued Retain of bank `reborn` (held inside
 * its slice, after the slice read the bank); instance A deletes the bank and creates it again;
 * then B's slice goes on. Nothing of the old bank may reach the new one (memories, entities,
 * terms, documents, model-call records, counters), and the job ends: it does not write on behalf
 * of the old bank. On PostgreSQL A and B are two instances (each its own store and pool) on one
 * database; on the embedded engine two apps in one process over one store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { openPostgres } from '../../src/store/postgres.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { capturedLog } from '../helpers/captured-log.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { heldEmbedder } from '../helpers/held-embedder.js';
import { until } from '../helpers/until.js';

for (const engine of ENGINES) {
  describe(`a job of a bank deleted and created again writes nothing into the new one (${engine})`, () => {
    let a: TestApp;
    let b: TestApp;
    let raw: Db;
    /** B's embedder holds the slice that embeds a text with HOLD until `held.release()`. */
    let held: ReturnType<typeof heldEmbedder>;
    const logged: { msg: string; operation?: string }[] = [];

    before(async () => {
      const opened = await openTestDb(engine);
      raw = opened.db;
      a = await testApp(engine, { store: Object.assign(storeOver(raw), { dispose: opened.dispose }) });
      held = heldEmbedder(a.services.embedder);
      const holding = held.embedder;
      // On PostgreSQL, B is another instance: its own store and connection pool on the database.
      const url = (opened as { url?: string }).url;
      if (url) {
        const other = await openPostgres(url, { poolSize: 4 });
        b = await testApp(engine, {
          store: Object.assign(storeOver(other), { dispose: () => other.close() }),
          embedder: holding,
        });
      } else b = await a.reconfigured({ embedder: holding });
    });
    after(async () => {
      if (engine === 'postgres') await b?.close();
      await a.close();
    });

    test('a Retain held in its slice while its bank is deleted and created again', async () => {
      const log = capturedLog(logged);
      let q: { body: { operation_id: string } } = { body: { operation_id: '' } };
      const worker = startWorker(b.services, log, { runners: OPERATION_RUNNERS, pollMs: 20 });
      try {
        const items = ['Alice met Bob in Paris. HOLD', 'Carol flew to Rome with Dave. HOLD'].map(
          (content) => ({
            content,
            document_id: 'old-doc',
            entities: [{ text: 'Old Entity' }],
          }),
        );
        const queued = await a.call('POST', bankPath('reborn', '/memories'), {
          body: { items, async: true },
        });
        assert.equal(queued.status, 200, JSON.stringify(queued.body));
        q = queued;
        await held.entered;
        assert.equal((await a.call('DELETE', bankPath('reborn'))).status, 200);
        const again = await a.call('PUT', bankPath('reborn'), { body: {} });
        assert.ok(again.status === 200 || again.status === 201, JSON.stringify(again.body));
        held.release();
        // The job ends one way or the other (completed, failed, or ended with its bank).
        await until(
          async () =>
            logged.filter((l) => l.operation === q.body.operation_id && l.msg !== 'operation waits its turn'),
          (l) => l.length > 0,
        );
      } finally {
        await worker.stop();
      }
      assert.deepEqual(
        logged
          .filter((l) => l.operation === q.body.operation_id && l.msg !== 'operation waits its turn')
          .map((l) => l.msg),
        ['operation ended: its bank was deleted'],
      );
      const profile = await a.call('GET', bankPath('reborn', '/profile'));
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      const count = async (table: string) =>
        (
          await raw.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${table} WHERE project_id = 'default' AND bank_id = 'reborn'`,
          )
        )[0]!.n;
      const found: Record<string, number> = {};
      for (const table of [
        'memories',
        'entities',
        'memory_terms',
        'memory_entities',
        'documents',
        'operations',
      ])
        found[table] = await count(table);
      const bank = (
        await raw.query<{ memory_count: number; term_total: number; embedder: string | null }>(
          `SELECT memory_count, term_total::int AS term_total, embedder FROM banks
           WHERE project_id = 'default' AND id = 'reborn'`,
        )
      )[0]!;
      assert.deepEqual(
        { ...found, memory_count: bank.memory_count, term_total: bank.term_total, embedder: bank.embedder },
        {
          memories: 0,
          entities: 0,
          memory_terms: 0,
          memory_entities: 0,
          documents: 0,
          operations: 0,
          memory_count: 0,
          term_total: 0,
          embedder: null,
        },
      );
    });
  });
}
