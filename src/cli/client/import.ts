import { createHash, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Mnemo, RetainItem } from '../../../packages/client/src/index.js';
import type { BankLine, DirectiveLine, EndLine, HeaderLine } from './bank-file.js';
import { retainItemOf } from './bank-file.js';
import { newestMemoryId, prepareBank, restoreIntakeConfig, retainedSince } from './bank-setup.js';
import { jsonLines, readJsonIfExists, sha256File, writeJsonAtomic } from './files.js';
import { cliIo } from '../io.js';
import { Progress } from './progress.js';

/** A batch stays well under the server's 10 MB body limit whatever the batch size. */
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * The progress file beside the input. Batches go one at a time, so the acknowledged ones are
 * exactly those before `next_batch`. `in_flight` names a batch sent but not acknowledged, with
 * the bank's newest memory before it: on resume, a memory retained after that one means the
 * batch was stored.
 */
interface ImportState {
  file: string;
  file_sha256: string;
  bank: string;
  batch_size: number;
  /** Part of every Idempotency-Key: the same across resumes, new with --restart. */
  run_id: string;
  batches: number;
  items: number;
  next_batch: number;
  items_done: number;
  in_flight: { batch: number; newest_before: string | null } | null;
  config_applied: boolean;
  completed: boolean;
}

interface FileMeta {
  header?: HeaderLine;
  bank?: BankLine;
  end?: EndLine;
  directives: DirectiveLine[];
  memories: number;
}

interface Batch {
  index: number;
  items: RetainItem[];
}

/**
 * The file's Retain batches, always cut the same way for the same file and batch size. An
 * item of a document gets `update_mode: replace` in the first batch that holds the document
 * (so a re-sent batch replaces rather than duplicates) and `append` in later ones (so batches
 * do not undo each other); an explicit `update_mode` is kept.
 */
async function* readBatches(file: string, batchSize: number, meta: FileMeta): AsyncGenerator<Batch> {
  const docsBefore = new Set<string>();
  let docsHere = new Set<string>();
  let items: RetainItem[] = [];
  let bytes = 0;
  let index = 0;
  const cut = () => {
    const batch = { index: index++, items };
    for (const d of docsHere) docsBefore.add(d);
    docsHere = new Set();
    items = [];
    bytes = 0;
    return batch;
  };
  for await (const { lineNo, value } of jsonLines(file)) {
    if (value.kind === 'header') meta.header = value as unknown as HeaderLine;
    else if (value.kind === 'bank') meta.bank = value as unknown as BankLine;
    else if (value.kind === 'end') meta.end = value as unknown as EndLine;
    else if (value.kind === 'directive') meta.directives.push(value as unknown as DirectiveLine);
    const item = retainItemOf(value, lineNo);
    if (!item) continue;
    if (value.kind === 'memory') meta.memories++;
    const size = Buffer.byteLength(JSON.stringify(item));
    if (items.length > 0 && (items.length >= batchSize || bytes + size > MAX_BATCH_BYTES)) yield cut();
    const doc = item.document_id;
    if (doc !== undefined && item.update_mode === undefined) {
      item.update_mode = docsBefore.has(doc) ? 'append' : 'replace';
      docsHere.add(doc);
    }
    items.push(item);
    bytes += size;
  }
  if (items.length) yield cut();
}

export interface ImportOptions {
  file: string;
  /** The target bank; defaults to the bank named in an export's header. */
  bank?: string;
  batchSize: number;
  progressFile?: string;
  /** Ignores (and replaces) an existing progress file. */
  restart?: boolean;
  /** Applies an export's bank identity, config and directives (needs `admin`). */
  config: boolean;
  log: (message: string) => void;
}

export interface ImportResult {
  bank: string;
  items: number;
  batches: number;
  sent_batches: number;
  status: 'completed' | 'already_imported' | 'interrupted';
  items_per_second: number;
}

/**
 * Imports a JSONL file (an export, or plain Retain items) in batches. Each batch carries an
 * Idempotency-Key derived from the run, file, bank and batch index, and the progress file records
 * every acknowledged batch, so running the same command again after an interruption (Ctrl-C,
 * a kill, a crash, a lost server) carries on where it stopped without storing anything twice.
 */
export async function importFile(client: Mnemo, opts: ImportOptions): Promise<ImportResult> {
  const sha = await sha256File(opts.file);
  const meta: FileMeta = { directives: [], memories: 0 };
  let batches = 0;
  let items = 0;
  for await (const b of readBatches(opts.file, opts.batchSize, meta)) {
    batches++;
    items += b.items.length;
  }
  if (meta.header && !meta.end) throw new Error(`${opts.file} has no end line: the export was cut off`);
  if (meta.end && meta.end.memories !== meta.memories) {
    throw new Error(
      `${opts.file} holds ${meta.memories} memories but its end line counts ${meta.end.memories}`,
    );
  }
  const bank = opts.bank ?? meta.header?.bank;
  if (!bank) throw new Error('name the target bank with --bank');

  const statePath = opts.progressFile ?? `${opts.file}.progress.json`;
  let state = opts.restart ? undefined : await readJsonIfExists<ImportState>(statePath);
  if (state && (state.file_sha256 !== sha || state.bank !== bank || state.batch_size !== opts.batchSize)) {
    throw new Error(
      `${statePath} records an import of another file, bank or batch size (bank '${state.bank}', batch size ${state.batch_size}); pass --restart to start over`,
    );
  }
  const result = (status: ImportResult['status'], sent: number, rate: number): ImportResult => ({
    bank,
    items,
    batches,
    sent_batches: sent,
    status,
    items_per_second: Math.round(rate),
  });
  if (state?.completed) {
    opts.log(
      `${opts.file} was imported into ${bank} already (${statePath}); pass --restart to import it again`,
    );
    return result('already_imported', 0, 0);
  }
  if (state) opts.log(`resuming: ${state.next_batch} of ${state.batches} batches were stored before`);
  state ??= {
    file: resolve(opts.file),
    file_sha256: sha,
    bank,
    batch_size: opts.batchSize,
    run_id: randomUUID(),
    batches,
    items,
    next_batch: 0,
    items_done: 0,
    in_flight: null,
    config_applied: false,
    completed: false,
  };
  const save = () => writeJsonAtomic(statePath, state);
  await save();

  const key = (index: number) =>
    `mnemo-import-${createHash('sha256').update(`${state.run_id}\n${sha}\n${bank}\n${opts.batchSize}\n${index}`).digest('hex').slice(0, 40)}`;
  const configure = async () => {
    if (!meta.bank || !opts.config || state.config_applied) return;
    if (!(await prepareBank(client, bank, meta.bank, meta.directives, opts.log))) return;
    state.config_applied = true;
    await save();
  };

  let stop = false;
  const onSignal = () => {
    stop = true;
    opts.log('\nstopping after the batch being sent (again to quit at once)');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const progress = new Progress('import', items, cliIo().stderr, state.items_done);
  let sent = 0;
  try {
    // The bank gets the export's setup before any memory arrives. When it cannot be created here
    // (a key without admin), batch 0 creates it with the defaults: verbatim, no automatic entities.
    await configure();
    for await (const batch of readBatches(opts.file, opts.batchSize, { directives: [], memories: 0 })) {
      if (batch.index < state.next_batch) continue;
      if (stop) break;
      const doubt = state.in_flight?.batch === batch.index ? state.in_flight : null;
      if (doubt && (await retainedSince(client, bank, doubt.newest_before))) {
        opts.log(`batch ${batch.index} was stored before the interruption`);
      } else {
        // Not stored, or cannot tell: sent again under the same Idempotency-Key.
        state.in_flight = { batch: batch.index, newest_before: await newestMemoryId(client, bank) };
        await save();
        await client.memories.retain(
          bank,
          { items: batch.items },
          // A long extraction must not be cut off and re-sent: the server would answer 409 (in progress).
          { idempotencyKey: key(batch.index), maxRetries: 8, timeout: 600_000 },
        );
        sent++;
      }
      state.next_batch = batch.index + 1;
      state.items_done += batch.items.length;
      state.in_flight = null;
      await save();
      await configure();
      progress.update(state.items_done);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (state.next_batch < state.batches) {
    opts.log(
      `interrupted after ${state.next_batch} of ${state.batches} batches; run the same command again to resume`,
    );
    return result('interrupted', sent, progress.rate());
  }
  if (meta.bank && opts.config) await restoreIntakeConfig(client, bank, meta.bank, opts.log);
  state.completed = true;
  await save();
  progress.finish(
    `imported ${items} items into ${bank} in ${batches} batches (${progress.rate().toFixed(0)} items/s)`,
  );
  return result('completed', sent, progress.rate());
}
