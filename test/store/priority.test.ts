import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { inBackground, priorityGate } from '../../src/store/priority.js';
import { openTestDb } from '../helpers/engines.js';

describe('priority gate', () => {
  test('a background statement waits while a request statement is in flight', async () => {
    const gate = priorityGate();
    const order: string[] = [];
    let release!: () => void;
    const foreground = gate(async () => {
      order.push('fg start');
      await new Promise<void>((r) => {
        release = r;
      });
      order.push('fg end');
    });
    const backgroundDone = inBackground(() => gate(async () => order.push('bg')));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(order, ['fg start'], 'the background statement must not start beside the request');
    release();
    await Promise.all([foreground, backgroundDone]);
    assert.deepEqual(order, ['fg start', 'fg end', 'bg']);
  });

  test('under constant request load a background statement still runs', async () => {
    // Request statements of at least 1 ms each, back to back, until the background statement has
    // run (at most 3,000 of them, 3 s, thirty times the longest a background statement waits,
    // MAX_WAIT_MS). A gate that waited for a quiet moment would run it only after the last one.
    const gate = priorityGate();
    const TOTAL = 3_000;
    let served = 0;
    let ran = false;
    const load = (async () => {
      while (served < TOTAL && !ran) {
        await gate(() => new Promise((r) => setTimeout(r, 1)));
        served++;
      }
    })();
    while (served === 0) await new Promise((r) => setTimeout(r, 1));
    const servedWhenItRan = await inBackground(() =>
      gate(async () => {
        ran = true;
        return served;
      }),
    );
    await load;
    assert.ok(
      servedWhenItRan < TOTAL,
      `the background statement waited for all ${TOTAL} request statements to finish`,
    );
  });
});

describe('priority on the embedded engine', () => {
  let db: Db;
  before(async () => {
    ({ db } = await openTestDb('pglite'));
    await db.exec('CREATE TABLE t (n int)');
  });
  after(() => db.close());

  test("a request's statements run back to back while background work keeps issuing statements", async () => {
    const log: string[] = [];
    let stop = false;
    const background = inBackground(async () => {
      while (!stop) {
        await db.query('SELECT count(*) FROM generate_series(1, 20000)');
        log.push('bg');
      }
    });
    // The background loop is running before the request comes in (however slow the machine).
    while (log.length === 0) await new Promise((r) => setTimeout(r, 5));
    const start = log.length;
    for (let i = 0; i < 5; i++) {
      await db.query('INSERT INTO t VALUES ($1)', [i]);
      log.push('fg');
    }
    stop = true;
    await background;
    const during = log.slice(start, log.lastIndexOf('fg'));
    // At most the background statement already running when the request came in.
    assert.ok(
      during.filter((e) => e === 'bg').length <= 1,
      `background statements between the request's: ${during}`,
    );
    assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t'))[0]!.n, 5);
  });

  test("requests' statements let the event loop turn between them", async () => {
    // Four requests, each running 10 statements one after the other; every statement takes
    // longer than a slice (a few ms), so each turn of the event loop starts about one.
    const CHAINS = 4;
    const STEPS = 10;
    let done = 0;
    let finished = false;
    const requests = Promise.all(
      Array.from({ length: CHAINS }, async () => {
        for (let i = 0; i < STEPS; i++) {
          await db.query('SELECT count(*) FROM generate_series(1, $1::int)', [100_000]);
          done++;
        }
      }),
    ).finally(() => {
      finished = true;
    });
    // A callback that runs on every turn (as socket reads and accepts do) notes how many
    // statements finished since its last run. Without turns between statements, all 40 settle
    // in one chain of promise callbacks before it runs again.
    let most = 0;
    let seen = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        most = Math.max(most, done - seen);
        seen = done;
        if (finished) resolve();
        else setImmediate(tick);
      };
      setImmediate(tick);
    });
    await requests;
    assert.equal(done, CHAINS * STEPS);
    assert.ok(most <= 2, `statements finished between two turns of the event loop: ${most}`);
  });

  test('a background transaction commits', async () => {
    await inBackground(() => db.transaction((tx) => tx.query('INSERT INTO t VALUES (99)')));
    assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t WHERE n = 99'))[0]!.n, 1);
  });
});
