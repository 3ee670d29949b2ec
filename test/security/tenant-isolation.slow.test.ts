/**
 * One tenant's heavy work must not starve another's. Tenant A queues two big async Retains
 * (items naming many new entities: the consolidation they trigger follows) and tenant B, in
 * another project, probes /health and its own Recall the whole time and queues a small async
 * Retain of its own. B's worst latency stays under a loose bound (a noisy 2-core machine, far
 * below the tens of seconds a whole-batch transaction used to hold the embedded engine), and
 * B's Retain completes while A's backlog is still there: claims go round-robin across projects,
 * and A's work runs in bounded slices instead of one operation holding the worker to its end.
 * `npm run bench -- isolation` prints the figures.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { heavyItems } from '../../bench/isolation.js';
import { ENGINES } from '../helpers/engines.js';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * Loose: CI machines are noisy. Before the fix B waited ~25 s for its Retain and minutes on a bigger
 * batch (87 s behind a sync 200 x 100 Retain); then ~1.5 s at worst on a loaded 2-core machine;
 * with memory reads, Retain slices and statistics bounded per statement, 0.2–0.9 s there, and
 * 2.8 s once on a machine at load 22 (2 cores shared with other suites). The benchmark
 * (`npm run bench -- isolation`) holds the sub-second target; this bound only catches the old
 * class of stall (tens of seconds) without flaking on a busy machine.
 */
const WORST_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const engine of ENGINES) {
  describe(`tenant isolation (${engine})`, () => {
    let t: TestApp;
    const keys: Record<string, string> = {};
    const backlog = async () => {
      let n = 0;
      for (const status of ['pending', 'processing']) {
        const r = await t.call('GET', `/v1/me/banks/a/operations?status=${status}`, { token: keys.a });
        n += r.status === 200 ? r.body.items.length : 0;
      }
      return n;
    };

    before(async () => {
      t = await testApp(engine, { runWorker: true });
      for (const p of ['a', 'b']) {
        assert.equal(
          (await t.call('POST', '/v1/default/projects', { body: { id: `tenant-${p}`, name: p } })).status,
          201,
        );
        const k = await t.call('POST', `/v1/default/projects/tenant-${p}/keys`, {
          body: { name: 'k', scopes: ['retain', 'recall'] },
        });
        assert.equal(k.status, 201);
        keys[p] = k.body.key;
      }
      const seeded = await t.call('POST', '/v1/me/banks/b/memories', {
        token: keys.b,
        body: { items: [{ content: 'Bob likes hiking in the Alps.' }, { content: 'Bob drinks green tea.' }] },
      });
      assert.equal(seeded.status, 200, JSON.stringify(seeded.body));
    });
    after(() => t.close());

    test("A's heavy Retains leave B's latency bounded, and B's own async Retain runs before A's backlog is done", async () => {
      for (const tag of ['first', 'second']) {
        const r = await t.call('POST', '/v1/me/banks/a/memories', {
          token: keys.a,
          body: { async: true, items: heavyItems(200, 20, tag) },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const latencies: number[] = [];
      let stop = false;
      const probe = (async () => {
        while (!stop) {
          let t0 = performance.now();
          assert.equal((await t.call('GET', '/health', { token: null })).status, 200);
          latencies.push(performance.now() - t0);
          t0 = performance.now();
          const r = await t.call('POST', '/v1/me/banks/b/memories/recall', {
            token: keys.b,
            body: { query: 'What does Bob like?' },
          });
          assert.equal(r.status, 200);
          latencies.push(performance.now() - t0);
          await sleep(50);
        }
      })();
      try {
        // Let A's work get going first: B's Retain arrives behind a queue that is already busy.
        await sleep(500);
        const op = await t.call('POST', '/v1/me/banks/b/memories', {
          token: keys.b,
          body: { async: true, items: [{ content: 'Bob moved to Lisbon in May.' }] },
        });
        assert.equal(op.status, 200);
        const started = performance.now();
        for (;;) {
          const r = await t.call('GET', `/v1/me/banks/b/operations/${op.body.operation_id}`, {
            token: keys.b,
          });
          if (r.body.status === 'completed') break;
          assert.ok(performance.now() - started < 60_000, `B's Retain still ${r.body.status} after 60 s`);
          await sleep(50);
        }
        const left = await backlog();
        assert.ok(left > 0, "A's backlog was done before B's Retain ran: claims are not fair");
      } finally {
        stop = true;
        await probe;
      }
      const worst = Math.max(...latencies);
      assert.ok(worst < WORST_MS, `B's worst latency ${Math.round(worst)} ms (bound ${WORST_MS} ms)`);
    });

    test("A's big sync Retain is written in slices: B's Recalls run between them", async () => {
      const items = 100;
      let done = false;
      const latencies: number[] = [];
      /** B's Recalls that finished while A's Retain had stored some of its slices, not all. */
      let between = 0;
      const probe = (async () => {
        while (!done) {
          const t0 = performance.now();
          const r = await t.call('POST', '/v1/me/banks/b/memories/recall', {
            token: keys.b,
            body: { query: 'What does Bob like?' },
          });
          assert.equal(r.status, 200);
          latencies.push(performance.now() - t0);
          const a = await t.call('GET', '/v1/me/banks/sync', { token: keys.a });
          const stored = a.status === 200 ? a.body.memory_count : 0;
          if (!done && stored > 0 && stored < items) between++;
          await sleep(20);
        }
      })();
      try {
        // 100 items naming 50 new entities each: 25 slices of 4 items.
        const r = await t.call('POST', '/v1/me/banks/sync/memories', {
          token: keys.a,
          body: { items: heavyItems(items, 50, 'sync') },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.memories_created, items);
      } finally {
        done = true;
        await probe;
      }
      assert.ok(
        between > 0,
        "no Recall of B ran while A's Retain was part-way: one transaction held the engine",
      );
      const worst = Math.max(...latencies);
      assert.ok(worst < WORST_MS, `B's worst latency ${Math.round(worst)} ms (bound ${WORST_MS} ms)`);
    });
  });
}
