import { createWriteStream } from 'node:fs';
import { appendFile, mkdtemp, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { cliIo } from '../io.js';
import {
  type Directive,
  type Entity,
  type Memory,
  type Mnemo,
  PermissionDeniedError,
} from '../../../packages/client/src/index.js';
import {
  type BankFileLine,
  FORMAT,
  FORMAT_VERSION,
  isConsolidatedObservation,
  memoryLine,
} from './bank-file.js';
import { linesBackward, put, readJsonIfExists, writeJsonAtomic } from './files.js';
import { Progress } from './progress.js';

/** What an interrupted export to a file left behind, to carry on from. */
interface ExportState {
  bank: string;
  /** The cursor of the next page (the listing runs newest first). */
  cursor: string | null;
  memories: number;
  /** Bytes of the spool that hold whole pages; anything after them is dropped on resume. */
  bytes: number;
  done: boolean;
}

export interface ExportCounts {
  memories: number;
  entities: number;
  documents: number;
  directives: number;
}

const PAGE = 500;

/**
 * Writes a whole bank as JSONL (see bank-file.ts) to `output`, or to stdout. Memories are listed
 * newest first into a spool file, which is then read backwards so the file holds them oldest
 * first. With `output`, the spool (`<output>.partial`) and `<output>.progress.json` survive an
 * interruption and the next run continues from the last page written.
 */
export async function exportBank(
  client: Mnemo,
  bank: string,
  opts: { output?: string; log: (message: string) => void },
): Promise<ExportCounts> {
  const profile = await client.banks.get(bank);
  const config = await client.banks.config.get(bank);
  let entities: Entity[] = [];
  try {
    entities = await client.entities.list(bank, { limit: PAGE }).toArray();
  } catch (err) {
    if (!(err instanceof PermissionDeniedError)) throw err;
    opts.log('warning: the key lacks graph:read, so entity types are not exported (they become OTHER)');
  }
  let directives: Directive[] = [];
  try {
    directives = await client.directives.list(bank);
  } catch (err) {
    if (!(err instanceof PermissionDeniedError)) throw err;
    opts.log('warning: the key lacks admin, so directives are not exported');
  }

  const tmpDir = opts.output ? undefined : await mkdtemp(join(tmpdir(), 'mnemo-export-'));
  const spool = opts.output ? `${opts.output}.partial` : join(tmpDir!, 'memories.jsonl');
  const statePath = opts.output ? `${opts.output}.progress.json` : undefined;
  try {
    let state = statePath ? await readJsonIfExists<ExportState>(statePath) : undefined;
    if (state && state.bank !== bank) {
      throw new Error(
        `${statePath} belongs to an export of bank '${state.bank}'; delete it or pick another output`,
      );
    }
    if (state) opts.log(`resuming the export of ${bank} after ${state.memories} memories`);
    state ??= { bank, cursor: null, memories: 0, bytes: 0, done: false };
    await writeFile(spool, '', { flag: 'a' });
    await truncate(spool, state.bytes);

    const progress = new Progress(
      'export',
      Math.max(profile.memory_count, state.memories),
      cliIo().stderr,
      state.memories,
    );
    while (!state.done) {
      const page = await client.memories.list(
        bank,
        { limit: PAGE, cursor: state.cursor ?? undefined },
        { maxRetries: 6 },
      );
      const text = page.items.map((m) => `${JSON.stringify(m)}\n`).join('');
      await appendFile(spool, text);
      state = {
        ...state,
        bytes: state.bytes + Buffer.byteLength(text),
        memories: state.memories + page.items.length,
        cursor: page.next_cursor,
        done: page.next_cursor === null,
      };
      if (statePath) await writeJsonAtomic(statePath, state);
      progress.update(state.memories);
    }

    const out: Writable = opts.output ? createWriteStream(`${opts.output}.tmp`) : cliIo().stdout;
    const emit = (line: BankFileLine) => put(out, `${JSON.stringify(line)}\n`);
    await emit({
      kind: 'header',
      format: FORMAT,
      version: FORMAT_VERSION,
      bank,
      exported_at: new Date().toISOString(),
    });
    await emit({
      kind: 'bank',
      id: profile.id,
      name: profile.name,
      mission: profile.mission,
      space_id: profile.space_id,
      disposition: profile.disposition,
      config: config.overrides,
    });
    for (const d of directives) {
      await emit({
        kind: 'directive',
        name: d.name,
        text: d.text,
        priority: d.priority,
        tags: d.tags,
        active: d.active,
      });
    }
    for (const { id: _id, ...e } of entities) await emit({ kind: 'entity', ...e });
    const types = new Map(entities.map((e) => [e.name, e.type]));
    const documents = new Map<string, number>();
    let memories = 0;
    let observations = 0;
    for await (const raw of linesBackward(spool)) {
      const m = JSON.parse(raw) as Memory;
      if (isConsolidatedObservation(m)) {
        observations++;
        continue;
      }
      if (m.document_id !== null) documents.set(m.document_id, (documents.get(m.document_id) ?? 0) + 1);
      await emit(memoryLine(m, types));
      memories++;
    }
    for (const [id, count] of documents) await emit({ kind: 'document', id, memory_count: count });
    const counts = {
      memories,
      entities: entities.length,
      documents: documents.size,
      directives: directives.length,
    };
    await emit({ kind: 'end', ...counts });
    if (opts.output) {
      out.end();
      await once(out, 'finish');
      await rename(`${opts.output}.tmp`, opts.output);
      await rm(spool, { force: true });
      await rm(statePath!, { force: true });
    }
    if (observations)
      opts.log(`left out ${observations} observations of consolidation (the importing bank makes its own)`);
    progress.finish(
      `exported ${counts.memories} memories, ${counts.entities} entities, ${counts.documents} documents, ${counts.directives} directives of ${bank}`,
    );
    return counts;
  } finally {
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true });
  }
}
