/**
 * PostgreSQL stopped (as by a crash) and started again under load, with the same mnemo process
 * running throughout: while the database is down every request fails fast with 503
 * `unavailable` (never a 500, never a hang, the server stays up), and once it is back requests
 * succeed again without restarting mnemo. Acknowledged writes survive the database's crash
 * recovery. Runs on a private cluster (the machine's shared PostgreSQL is never restarted) and
 * is skipped, saying why, when one cannot be started.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { integrityProblems } from './integrity.js';
import { bankPath, call, type MnemoChild, startServe, unhandledErrors, waitFor } from './helpers.js';
import { startPrivatePostgres } from './private-postgres.js';

interface Outcome {
  at: number;
  kind: 'recall' | 'retain';
  status: number | 'network';
  code?: string;
  requestId?: string;
  content?: string;
}

const BANK = 'restart@example.com';

test('PostgreSQL restarted under load: 503 while it is down, success after, mnemo never restarted', {
  timeout: 900_000,
}, async (t) => {
  const started = await startPrivatePostgres();
  if ('reason' in started) {
    t.skip(started.reason);
    return;
  }
  const db = started.pg;
  let server: MnemoChild | undefined;
  try {
    server = await startServe({ databaseUrl: db.url, worker: true });
    const url = server.url;
    const seed = await call(url, 'POST', bankPath(BANK, '/memories'), {
      body: {
        items: Array.from({ length: 10 }, (_, i) => ({ content: `seed fact ${i}`, fact_type: 'world' })),
      },
    });
    assert.equal(seed.status, 200);

    const outcomes: Outcome[] = [];
    let stop = false;
    const client = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const kind = i % 2 === 0 ? 'recall' : 'retain';
        const content = `load w${w} r${i} ${randomUUID().slice(0, 8)}`;
        const at = Date.now();
        try {
          const r =
            kind === 'recall'
              ? await call(url, 'POST', bankPath(BANK, '/memories/recall'), {
                  body: { query: 'seed fact' },
                  timeoutMs: 30_000,
                })
              : await call(url, 'POST', bankPath(BANK, '/memories'), {
                  body: { items: [{ content, fact_type: 'world' }] },
                  timeoutMs: 30_000,
                });
          outcomes.push({
            at,
            kind,
            status: r.status,
            code: r.body?.error?.code,
            requestId: r.body?.error?.request_id,
            content,
          });
          // Pace the clients a little while the database is down: failures come back fast.
          if (r.status !== 200) await new Promise((res) => setTimeout(res, 50));
        } catch {
          outcomes.push({ at, kind, status: 'network', content });
        }
      }
    };
    const clients = Promise.all([0, 1, 2, 3].map(client));

    await new Promise((r) => setTimeout(r, 3000));
    const downAt = Date.now();
    await db.stop('immediate');
    await new Promise((r) => setTimeout(r, 2000));
    const ready = await call(url, 'GET', '/health/ready', { token: null, timeoutMs: 30_000 });
    assert.equal(ready.status, 503, 'readiness says the database is gone');
    await new Promise((r) => setTimeout(r, 2000));
    const upAt = Date.now();
    await db.start();
    // Load goes on until both kinds of request have succeeded a few times after the restart.
    await waitFor(
      'requests to succeed after the restart',
      async () => {
        const after = outcomes.filter((o) => o.at > upAt && o.status === 200);
        return after.filter((o) => o.kind === 'recall').length >= 5 &&
          after.filter((o) => o.kind === 'retain').length >= 5
          ? true
          : undefined;
      },
      120_000,
    );
    stop = true;
    await clients;

    assert.deepEqual(
      outcomes.filter((o) => o.status !== 200 && o.status !== 503),
      [],
      'only 200 and 503: no 500, no dropped connection, no hang',
    );
    for (const o of outcomes.filter((x) => x.status === 503)) {
      assert.equal(o.code, 'unavailable');
      assert.ok(o.requestId);
    }
    const down = outcomes.filter((o) => o.at > downAt + 500 && o.at < upAt);
    assert.ok(down.length > 0, 'requests were sent while the database was down');
    assert.ok(
      down.every((o) => o.status === 503),
      `while down: ${down.map((o) => o.status).join(',')}`,
    );
    assert.equal((await call(url, 'GET', '/health/ready', { token: null })).status, 200);
    assert.equal(server.child.exitCode, null, 'the same mnemo process served throughout');
    assert.deepEqual(unhandledErrors(server), []);

    // Acknowledged retains survived the database's crash recovery, once each.
    const texts = new Map<string, number>();
    let cursor: string | null = null;
    do {
      const c: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const r = await call(url, 'GET', bankPath(BANK, `/memories?limit=500${c}`));
      for (const m of r.body.items) texts.set(m.text, (texts.get(m.text) ?? 0) + 1);
      cursor = r.body.next_cursor;
    } while (cursor);
    for (const o of outcomes.filter((x) => x.kind === 'retain')) {
      const n = texts.get(o.content!) ?? 0;
      if (o.status === 200) assert.equal(n, 1, `acknowledged retain ${o.content}`);
      else assert.ok(n <= 1, `retain ${o.content} stored ${n} times`);
    }
    await server.stop();
    server = undefined;
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      assert.deepEqual(await integrityProblems({ query: async (q, p) => (await c.query(q, p)).rows }), []);
    } finally {
      await c.end();
    }
  } finally {
    if (server && server.child.exitCode !== null)
      t.diagnostic(`mnemo exited:\n${server.output().slice(-4000)}`);
    await server?.kill9();
    await db.destroy();
  }
});
