/**
 * A deep offset on the embedded engine (issue 18): over a bank of `--rows` (default 100,000)
 * memories, documents, entities and operations, and as many banks, one page at `--offset`
 * (default 90,000) of each listing, as the store reads it now (hops of at most
 * SKIP_PER_STATEMENT sort keys, then the page by keyset) and as one `OFFSET` statement read it
 * before. Prints the longest statement (CPU of the main thread, which PGlite holds while a
 * statement runs), the exchanges with the engine, and the page's CPU in all.
 * Run: `npm run bench -- offsets [--rows 100000] [--offset 90000]`.
 */
import type { Db } from '../src/store/db.js';
import { MEMORY_SELECT } from '../src/store/sql/memories.js';
import { storeOver } from '../src/store/open.js';
import { openTestDb } from '../test/helpers/engines.js';
import { mainThreadCpuMs, statementCpu } from './statement-cpu.js';

const P = 'default';
const BANK = 'deep';
const LIMIT = 50;

export function offsetArgs(argv: string[]): { rows: number; offset: number } {
  const value = (flag: string, dflt: number) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : dflt;
  };
  return { rows: value('--rows', 100_000), offset: value('--offset', 90_000) };
}

async function seed(db: Db, n: number) {
  await db.exec(`
    INSERT INTO banks (project_id, id) VALUES ('${P}', '${BANK}');
    INSERT INTO banks (project_id, id) SELECT '${P}', 'b-' || lpad(i::text, 7, '0') FROM generate_series(1, ${n}) i;
    INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, document_id)
      SELECT '${P}', '${BANK}', gen_random_uuid(), 'world', 'memory ' || i, md5(i::text), 'd-' || (i % 1000)
        FROM generate_series(1, ${n}) i;
    INSERT INTO documents (project_id, bank_id, id, content_hash, updated_at)
      SELECT '${P}', '${BANK}', 'd-' || i, md5(i::text), '2030-01-01'::timestamptz + i * interval '1 second'
        FROM generate_series(1, ${n}) i;
    ALTER TABLE entities DISABLE TRIGGER entities_keys_inserted;
    INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count)
      SELECT '${P}', '${BANK}', gen_random_uuid(), 'E' || i, 'e' || i, 'person', 1 + i % 37
        FROM generate_series(1, ${n}) i;
    ALTER TABLE entities ENABLE TRIGGER entities_keys_inserted;
    INSERT INTO operations (project_id, bank_id, id, kind, status, payload, created_at)
      SELECT '${P}', '${BANK}', gen_random_uuid(), 'retain', 'completed', '{}',
             '2030-01-01'::timestamptz + i * interval '1 second'
        FROM generate_series(1, ${n}) i;
    ANALYZE;
  `);
}

export async function benchOffsets(o: {
  rows: number;
  offset: number;
}): Promise<Record<string, string | number>[]> {
  const { db, dispose } = await openTestDb('pglite');
  try {
    await seed(db, o.rows);
    const store = storeOver(db);
    const at = o.offset;
    const before: Record<string, string> = {
      memories: `${MEMORY_SELECT} WHERE m.project_id = $1 AND m.bank_id = $2 ORDER BY m.seq DESC LIMIT ${LIMIT + 1} OFFSET ${at}`,
      documents: `SELECT d.id, (SELECT count(*)::int FROM memories m WHERE m.project_id = d.project_id
          AND m.bank_id = d.bank_id AND m.document_id = d.id) AS memory_count FROM documents d
        WHERE d.project_id = $1 AND d.bank_id = $2 ORDER BY d.updated_at DESC, d.id LIMIT ${LIMIT} OFFSET ${at}`,
      entities: `SELECT id::text AS id, name, type, aliases, mention_count, first_seen, last_seen FROM entities
        WHERE project_id = $1 AND bank_id = $2 AND mention_count > 0
        ORDER BY mention_count DESC, name_key LIMIT ${LIMIT + 1} OFFSET ${at}`,
      operations: `SELECT * FROM operations WHERE project_id = $1 AND bank_id = $2
        ORDER BY created_at DESC, id LIMIT ${LIMIT + 1} OFFSET ${at}`,
      banks: `SELECT * FROM banks WHERE project_id = $1 ORDER BY id LIMIT ${LIMIT} OFFSET ${at}`,
    };
    const now: Record<string, () => Promise<unknown>> = {
      memories: () => store.listMemories(P, BANK, {}, { limit: LIMIT, offset: at }),
      documents: () => store.listDocuments(P, BANK, { limit: LIMIT, offset: at }),
      entities: () => store.listEntities(P, BANK, { limit: LIMIT, offset: at }),
      operations: () => store.listOperations(P, BANK, {}, { limit: LIMIT, offset: at }),
      banks: () => store.listBanks(P, {}, { limit: LIMIT, offset: at }),
    };
    const rows: Record<string, string | number>[] = [];
    for (const [listing, page] of Object.entries(now)) {
      for (const [how, run] of [
        [
          'one OFFSET statement (before)',
          () => db.query(before[listing]!, listing === 'banks' ? [P] : [P, BANK]),
        ],
        ['hops, then keyset (now)', page],
      ] as const) {
        await run(); // warm: the page cache, and the statement's plan
        const cpu = statementCpu(1);
        cpu.begin();
        const t0 = mainThreadCpuMs();
        await run();
        const total = mainThreadCpuMs() - t0;
        const seen = cpu.stop();
        rows.push({
          listing,
          how,
          exchanges: seen.statements,
          'longest statement ms (CPU)': seen.worst[0]?.cpuMs ?? 0,
          'page ms (CPU)': Math.round(total),
        });
      }
    }
    return rows;
  } finally {
    await dispose();
  }
}
