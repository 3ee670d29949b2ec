/**
 * What the console's pages cost on a large bank: one bank of N memories (default 100,000)
 * and 200 small banks, then the API calls behind each page over a socket: bank list, bank
 * profile, first and a deep memories page (by cursor), filtered pages, entities, audit. Each
 * is one server page; nothing loads the whole bank.
 * The first 2,000 memories go through the store (entities linked as Retain does). On
 * PostgreSQL (MNEMO_DATABASE_URL, an empty database) the rest are filled in by one
 * INSERT ... SELECT over generate_series, linked to the same entities: this measures reads,
 * and a Retain of 100k items would take most of an hour on a shared machine. On PGlite every
 * memory goes through the store (keep N small there).
 * Run: `npx tsx bench/console.ts [memories, default 100000] [requests per row, default 20]`.
 */
import pg from 'pg';
import { createLogger } from '../src/api/logger.js';
import { startServer } from '../src/runtime/server.js';
import { loadConfig } from '../src/config/load.js';
import type { NewMemory } from '../src/core/types.js';
import { openStore } from '../src/store/open.js';
import { newMemory } from '../test/helpers/memory.js';

const N = Number(process.argv[2] ?? 100_000);
const REQUESTS = Number(process.argv[3] ?? 20);
const BANK = 'big@example.com';
const PEOPLE = ['Alice', 'Bob', 'Carol', 'Dave', 'Erin', 'Frank', 'Grace', 'Heidi'];
const PLACES = ['Lyon', 'Paris', 'Rome', 'Berlin', 'Oslo'];

const config = loadConfig({ logLevel: 'silent', port: 0, host: '127.0.0.1', worker: false }, {});
const databaseUrl = process.env.MNEMO_DATABASE_URL;
const store = await openStore(databaseUrl ? { databaseUrl } : {});
const server = await startServer(config, createLogger('silent'), { store });

function memory(i: number): NewMemory {
  const who = PEOPLE[i % PEOPLE.length]!;
  const where = PLACES[i % PLACES.length]!;
  const text = `Note ${i}: ${who} met a colleague in ${where} and talked about project ${i % 97}`;
  const embedding = new Float32Array(100);
  for (let d = 0; d < 100; d++) embedding[d] = Math.sin(i * 0.37 + d * 1.3);
  return newMemory({
    text,
    mentioned_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000),
    tags: [i % 10 === 0 ? 'travel' : 'work'],
    document_id: `doc-${Math.floor(i / 100)}`,
    content_hash: `h${i}`,
    embedding,
    terms: new Map(
      text
        .toLowerCase()
        .split(/\W+/)
        .filter(Boolean)
        .map((t) => [t, 1]),
    ),
    entities: [
      { text: who, type: 'PERSON' },
      { text: where, type: 'PLACE' },
    ],
  });
}

const started = performance.now();
await store.ensureBank('default', BANK, {});
const BATCH = 1000;
const throughStore = databaseUrl ? Math.min(N, 2000) : N;
for (let i = 0; i < throughStore; i += BATCH) {
  const batch = Array.from({ length: Math.min(BATCH, throughStore - i) }, (_, k) => memory(i + k));
  await store.insertMemories('default', BANK, batch);
  process.stderr.write(`\rwritten ${(i + batch.length).toLocaleString()} of ${N.toLocaleString()}`);
}
if (databaseUrl && N > throughStore) await bulkFill(databaseUrl, throughStore, N);
process.stderr.write('\n');

/** Memories `from`..`to`-1 like `memory(i)`, in SQL, with their entity links and the bank's counters. */
async function bulkFill(url: string, from: number, to: number): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const params = [BANK, from, to, PEOPLE, PLACES];
  await db.query('BEGIN');
  const last = await db.query('SELECT max(seq) AS seq FROM memories WHERE project_id = $1 AND bank_id = $2', [
    'default',
    BANK,
  ]);
  await db.query(
    `INSERT INTO memories (project_id, bank_id, id, type, text, mentioned_at, tags, document_id, content_hash,
       term_count, embedding)
     SELECT 'default', $1, gen_random_uuid(), 'world',
       'Note ' || i || ': ' || ($4::text[])[1 + i % 8] || ' met a colleague in ' || ($5::text[])[1 + i % 5]
         || ' and talked about project ' || (i % 97),
       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute',
       CASE WHEN i % 10 = 0 THEN ARRAY['travel'] ELSE ARRAY['work'] END,
       'doc-' || (i / 100), 'h' || i, 14,
       (SELECT embedding FROM memories WHERE project_id = 'default' AND bank_id = $1 LIMIT 1)
     FROM generate_series($2::int, $3::int - 1) AS i`,
    params,
  );
  await db.query(
    `INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
     SELECT m.project_id, m.bank_id, m.id, e.id FROM memories m
     JOIN entities e ON e.project_id = m.project_id AND e.bank_id = m.bank_id AND m.text LIKE '% ' || e.name || ' %'
     WHERE m.project_id = 'default' AND m.bank_id = $1 AND m.seq > $2`,
    [BANK, last.rows[0].seq],
  );
  await db.query(
    `UPDATE entities e SET mention_count = (SELECT count(*) FROM memory_entities me
       WHERE me.project_id = e.project_id AND me.bank_id = e.bank_id AND me.entity_id = e.id)
     WHERE e.project_id = 'default' AND e.bank_id = $1`,
    [BANK],
  );
  await db.query(
    `UPDATE banks SET memory_count = (SELECT count(*) FROM memories WHERE project_id = 'default' AND bank_id = $1)
     WHERE project_id = 'default' AND id = $1`,
    [BANK],
  );
  await db.query('COMMIT');
  // The steady state autovacuum reaches: visibility map set, statistics fresh.
  await db.query('VACUUM ANALYZE memories');
  await db.query('VACUUM ANALYZE memory_entities');
  await db.end();
}
for (let b = 0; b < 200; b++) await store.ensureBank('default', `user-${String(b).padStart(3, '0')}`, {});
const setupSeconds = (performance.now() - started) / 1000;

const get = async (path: string) => {
  const res = await fetch(`${server.url}/v1/default${path}`);
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return body;
};

// A cursor deep into the bank: 20 pages of 500 in.
let deep: string | undefined;
for (let p = 0; p < 20; p++)
  deep = (await get(`/banks/${encodeURIComponent(BANK)}/memories?limit=500${deep ? `&cursor=${deep}` : ''}`))
    .next_cursor;

const bank = `/banks/${encodeURIComponent(BANK)}`;
const rows: [string, string][] = [
  ['bank list (50 profiles)', '/banks?limit=50'],
  ['bank profile (counts)', bank],
  ['memories, first page of 50', `${bank}/memories?limit=50`],
  ['memories, page at 10,000 (cursor)', `${bank}/memories?limit=50${deep ? `&cursor=${deep}` : ''}`],
  ['memories, type + tags filter', `${bank}/memories?limit=50&type=world&tags=travel&tags_match=any_strict`],
  ['memories, document filter', `${bank}/memories?limit=50&document_id=doc-500`],
  ['memories, text search q', `${bank}/memories?limit=50&q=${encodeURIComponent('project 42')}`],
  ['entities, first page', `${bank}/entities?limit=50`],
  ['audit, first page', '/audit?limit=50'],
];

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const table: string[] = [
  `console pages on a bank of ${N.toLocaleString()} memories (${store.engine}, ${REQUESTS} requests each; setup ${setupSeconds.toFixed(1)} s)`,
  '',
  '| page request | p50 ms | p95 ms | max ms |',
  '|---|---:|---:|---:|',
];
for (const [name, path] of rows) {
  await get(path);
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    await get(path);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  table.push(
    `| ${name} | ${pct(times, 50).toFixed(1)} | ${pct(times, 95).toFixed(1)} | ${times.at(-1)!.toFixed(1)} |`,
  );
}
process.stdout.write(`${table.join('\n')}\n`);
await server.close();
await store.close();
