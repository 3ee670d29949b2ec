/**
 * The JSON answers of `--questions` new Recall questions (the load benchmark's `recall-unique`
 * generator, budget `mid`) over the load benchmark's bank, written one a line to `--out` with
 * their SHA-256: run it on two versions of the code and compare, byte for byte.
 *
 * The bank is seeded once and kept (`--database NAME` on PostgreSQL, `--dir DIR` on PGlite): the
 * HNSW graph is built with random levels, so a bank seeded again may answer differently; the
 * second run reuses the first one's bank (migrating it when the code has a new migration). `now`
 * is fixed, so windows relative to today are the same on every run.
 *
 * Run: `npx tsx bench/recall-answers.ts --engine pglite|postgres [--database mnemo_answers]
 *   [--dir /tmp/mnemo-answers] [--memories 10000] [--questions 300] --out FILE`
 * (PostgreSQL: MNEMO_TEST_DATABASE_URL, whose server the database is made on). `--drop` removes the
 * kept bank instead. `--thread`: PGlite on a thread of its own (`openPgliteThread`).
 * `--keyword-cache-mb N`: `MNEMO_KEYWORD_CACHE_MB` (0: keyword search in SQL only).
 */
import { createHash } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { DEFAULT_KEYWORD_CACHE_MB } from '../src/store/keyword-memory.js';
import { openStore } from '../src/store/open.js';
import { testApp } from '../test/helpers/app.js';
import { BANK, RECALL_MAX_TOKENS, seedItems, variedQueries } from './load-driver.js';
import { flag } from './flags.js';

const argv = process.argv.slice(2);
const engine = flag('engine', 'postgres');
const memories = Number(flag('memories', '10000'));
const questions = Number(flag('questions', '300'));
const dir = flag('dir', '/tmp/mnemo-answers');
const database = flag('database', 'mnemo_answers');
const out = flag('out', '');
const NOW = new Date('2026-11-27T12:00:00Z');

const admin = process.env.MNEMO_TEST_DATABASE_URL;
let url = '';
let fresh: boolean;
if (engine === 'postgres') {
  if (!admin) throw new Error('MNEMO_TEST_DATABASE_URL is not set');
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`bad database name ${database}`);
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    const exists = (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount! > 0;
    if (argv.includes('--drop')) {
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      process.exit(0);
    }
    if (!exists) await c.query(`CREATE DATABASE ${database}`);
    fresh = !exists;
  } finally {
    await c.end();
  }
  const u = new URL(admin);
  u.pathname = `/${database}`;
  url = u.toString();
} else {
  if (argv.includes('--drop')) {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
  fresh = !existsSync(dir);
}
if (!out) throw new Error('--out FILE is needed');

const keywordCacheMb = Number(flag('keyword-cache-mb', String(DEFAULT_KEYWORD_CACHE_MB)));
const store = await openStore(
  engine === 'postgres'
    ? { databaseUrl: url, keywordCacheMb }
    : { dataDir: dir, embeddedThread: argv.includes('--thread'), keywordCacheMb },
);
const t = await testApp(engine as 'pglite' | 'postgres', { store, recallCacheSize: 0, now: () => NOW });
const path = `/v1/default/banks/${encodeURIComponent(BANK)}/memories`;
if (fresh) {
  for (let i = 0; i < memories; i += 500) {
    const items = seedItems(i, Math.min(500, memories - i));
    const r = await t.call('POST', path, { body: { items } });
    if (r.status !== 200) throw new Error(`seeding: ${r.status} ${JSON.stringify(r.body)}`);
  }
}
const next = variedQueries(11);
const hash = createHash('sha256');
const lines: string[] = [];
for (let i = 0; i < questions; i++) {
  const query = next();
  const r = await t.call('POST', `${path}/recall`, {
    body: { query, budget: 'mid', max_tokens: RECALL_MAX_TOKENS },
  });
  if (r.status !== 200) throw new Error(`recall: ${r.status} ${JSON.stringify(r.body)}`);
  const line = JSON.stringify({ query, answer: r.body });
  hash.update(line);
  lines.push(line);
}
writeFileSync(out, `${lines.join('\n')}\n`);
const results = lines.reduce((n, l) => n + (JSON.parse(l).answer.results.length as number), 0);
process.stdout.write(
  `${engine}: ${questions} answers (${results} results) ${fresh ? 'over a new bank' : 'over the kept bank'}, sha256 ${hash.digest('hex')}\n`,
);
const copies = store.keywordMemoryStats();
if (copies) console.log(`keyword searches answered in the process ${copies.hits}, in SQL ${copies.misses}`);
await t.close();
