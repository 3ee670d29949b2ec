/**
 * Semantic search over an encrypted bank, whose vectors are sealed in the database and searched
 * in memory (src/core/crypto/vector-cache.ts): on the embedded engine, banks of 10k and 100k
 * memories with 100-dimension vectors (the local embedder's size). Cold: the first search of a
 * process (every sealed vector read, decrypted and kept); warm: later searches (one small query
 * checks the copy is current, then a brute-force scan); after a write: the search that follows a
 * one-memory Retain (only the new memory is read). Vectors are random unit vectors: the cost
 * does not depend on what they mean.
 *
 * Run: `npx tsx bench/sealed-vectors.ts [--sizes 10000,100000]` (or `npm run bench -- sealed-vectors`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import type { NewMemory } from '../src/core/types.js';
import { migrate } from '../src/store/migrate.js';
import { storeOver } from '../src/store/open.js';
import { openPglite } from '../src/store/pglite.js';
import { compose } from '../src/runtime/compose.js';
import { newMemory } from '../test/helpers/memory.js';

const DIMS = 100;
const BATCH = 5000;
const WARM_RUNS = 50;

function unitVector(): Float32Array {
  const v = new Float32Array(DIMS);
  let n = 0;
  for (let i = 0; i < DIMS; i++) {
    v[i] = Math.random() * 2 - 1;
    n += v[i]! * v[i]!;
  }
  for (let i = 0; i < DIMS; i++) v[i]! /= Math.sqrt(n);
  return v;
}

function memory(i: number): NewMemory {
  return newMemory({
    text: `synthetic memory number ${i}`,
    content_hash: randomBytes(16).toString('hex'),
    embedding: unitVector(),
    terms: new Map([[`w${i % 1000}`, 1]]),
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const ms = (x: number) => Number(x.toFixed(1));

export async function benchSealedVectors(
  opts: { sizes?: number[]; log?: (m: string) => void } = {},
): Promise<Record<string, string | number>[]> {
  const sizes = opts.sizes ?? [10_000, 100_000];
  const log = opts.log ?? (() => {});
  const rows: Record<string, string | number>[] = [];
  for (const size of sizes) {
    const db = await openPglite(undefined);
    try {
      await migrate(db);
      const config = loadConfig(
        { logLevel: 'silent', masterKey: randomBytes(32).toString('base64'), vectorCacheMb: 1024 },
        {},
      );
      const { services: s } = await compose(config, { store: storeOver(db) });
      const bank = `sealed-${size}`;
      await s.store.ensureBank('default', bank, {});
      await s.store.updateBankConfig('default', bank, { encryption: 'managed' });
      // Loaded in bulk, sealed as the encryption layer seals them (Retain's own cost is benched
      // elsewhere; 100k Retains would take most of the run).
      const st = await s.store.bankEncryption('default', bank);
      const codec = s.keyring!.codec('default', bank, st!.key!);
      const started = performance.now();
      for (let i = 0; i < size; i += BATCH) {
        const n = Math.min(BATCH, size - i);
        const rows = Array.from({ length: n }, (_, k) => {
          const id = randomUUID();
          return {
            id,
            text: codec.seal(`synthetic memory number ${i + k}`, 'text'),
            h: randomBytes(16).toString('hex'),
            v: codec.sealVector(id, unitVector()),
          };
        });
        await db.query(
          `INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, embedding_sealed, encrypted, mentioned_at)
           SELECT 'default', $1, r.id, 'world', r.text, r.h, r.v, true, now()
           FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, text text, h text, v text)`,
          [bank, JSON.stringify(rows)],
        );
      }
      await db.query("UPDATE banks SET memory_count = $2 WHERE project_id = 'default' AND id = $1", [
        bank,
        size,
      ]);
      log(`${size}: loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      const plain = await db.query<{ n: number }>(
        'SELECT count(embedding)::int AS n FROM memories WHERE bank_id = $1',
        [bank],
      );
      if (plain[0]!.n !== 0) throw new Error('an encrypted bank stored plain vectors');
      const search = async () => {
        const t = performance.now();
        const hits = await s.store.semanticSearch('default', bank, unitVector(), {}, 60);
        if (hits.length !== 60) throw new Error(`${hits.length} hits`);
        return performance.now() - t;
      };
      // The event loop's longest stall during a search: what other requests would wait.
      // (It measures from its first tick on: a turn of the loop before each measured stretch.)
      const loop = monitorEventLoopDelay({ resolution: 5 });
      const tick = () => new Promise((r) => setTimeout(r, 20));
      loop.enable();
      await tick();
      const cold = await search();
      await tick();
      loop.disable();
      const coldLoop = loop.max / 1e6;
      loop.reset();
      loop.enable();
      await tick();
      const warm: number[] = [];
      for (let i = 0; i < WARM_RUNS; i++) warm.push(await search());
      await tick();
      loop.disable();
      const afterWrite: number[] = [];
      for (let i = 0; i < 10; i++) {
        await s.store.insertMemories('default', bank, [memory(size + i)]);
        afterWrite.push(await search());
      }
      const heap = process.memoryUsage().heapUsed;
      const row = {
        engine: 'pglite',
        memories: size,
        'cold ms': ms(cold),
        'cold loop max ms': ms(coldLoop),
        'warm loop max ms': ms(loop.max / 1e6),
        'warm p50 ms': ms(pct(warm, 0.5)),
        'warm p95 ms': ms(pct(warm, 0.95)),
        'after 1 write p50 ms': ms(pct(afterWrite, 0.5)),
        'heap MB': Math.round(heap / 2 ** 20),
      };
      log(JSON.stringify(row));
      rows.push(row);
    } finally {
      await db.close();
    }
  }
  return rows;
}

export function sealedVectorArgs(argv: string[]): { sizes?: number[] } {
  const i = argv.indexOf('--sizes');
  return i >= 0 && argv[i + 1] ? { sizes: argv[i + 1]!.split(',').map(Number) } : {};
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await benchSealedVectors({
    ...sealedVectorArgs(process.argv.slice(2)),
    log: (m) => process.stderr.write(`  ${m}\n`),
  });
  console.table(rows);
}
