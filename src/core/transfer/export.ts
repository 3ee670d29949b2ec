import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { TransferExportResult } from '../../contract/transfer.js';
import { requireBank } from '../banks.js';
import { chargedFor } from '../budgets.js';
import { AppError } from '../errors.js';
import { checkId } from '../ids.js';
import { type OperationRunner, queueOperation } from '../operations.js';
import { rateLimited } from '../windows.js';
import { pacer } from '../pace.js';
import type { Deps } from '../services.js';
import type {
  BankStore,
  LimitStore,
  MemoryStore,
  OperationStore,
  DocumentStore,
  EntityStore,
  TransferArchiveStore,
} from '../../store/store.js';
import type { Memory } from '../types.js';
import {
  buildArchive,
  MAX_ARCHIVE_BYTES,
  SCHEMA_VERSION,
  type TransferDocument,
  type TransferFact,
} from './archive.js';

export const EXPORT_DOCUMENTS = 'export_documents';
/** How long an export's archive stays downloadable. */
export const ARCHIVE_TTL_MS = 24 * 60 * 60 * 1000;
/** Most memories one export carries: a bigger bank is exported with `mnemo export` (JSONL, resumable). */
export const MAX_EXPORT_MEMORIES = 100_000;
/** Most document ids one export may name. */
export const MAX_EXPORT_DOCUMENT_IDS = 1000;
const PAGE = 500;
/** Archives a bank keeps (each up to 10 MB, for a day): what repeated exports can make it hold. */
export const MAX_ARCHIVES_PER_BANK = 5;
/** `Retry-After` of an export refused because another of the bank's is queued. */
const EXPORT_RETRY_SECONDS = 5;

interface ExportPayload {
  document_ids: string[] | null;
  /** Where the download is served for the caller that asked (`/v1/default` or `/v1/me`). */
  base: string;
}

/** Recall units an export of a bank of `memories` costs: 1 per whole 1,000 memories it reads, at least 1. */
export const exportUnits = (memories: number) =>
  1 + Math.floor(Math.min(memories, MAX_EXPORT_MEMORIES) / 1000);

/** The download key of an archive: its bank (base64url), then 256 random bits. */
export const archiveKey = (bankId: string) =>
  `${Buffer.from(bankId).toString('base64url')}.${randomBytes(32).toString('hex')}.zip`;

/** The bank a download key names, or null when the key is not one. */
export function bankOfKey(key: string): string | null {
  const m = /^([A-Za-z0-9_-]{1,400})\.[0-9a-f]{64}\.zip$/.exec(key);
  return m ? Buffer.from(m[1]!, 'base64url').toString('utf8') : null;
}

/** Queues the export of the bank's documents (all, or those named) as an archive. */
export async function queueExport(
  s: Deps<BankStore & LimitStore & OperationStore, 'limitDefaults' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  opts: { documentIds?: string[]; base: string },
) {
  const bank = await requireBank(s, projectId, bankId);
  const ids = opts.documentIds?.length
    ? [...new Set(opts.documentIds.map((d) => checkId('document id', d, 'document_id').normalize('NFC')))]
    : null;
  if (ids && ids.length > MAX_EXPORT_DOCUMENT_IDS)
    throw new AppError('validation_error', `an export names at most ${MAX_EXPORT_DOCUMENT_IDS} documents`);
  // One export of a bank at a time: each reads the whole bank and keeps an archive of up to
  // 10 MB, so a key repeating the request must not queue that work (and storage) without end.
  // Asked before charging, so a refused export costs nothing; the queueing below decides under
  // the bank's row lock (two requests at once both get here), and the one it refuses has its
  // charge given back: the charge and the refusal are one decision.
  for (const status of ['pending', 'processing']) {
    const [queued] = (
      await s.store.listOperations(projectId, bankId, { kind: EXPORT_DOCUMENTS, status }, { limit: 1 })
    ).items;
    if (queued) throw exportQueued(bankId, queued.id);
  }
  // Reading the bank is Recall-like work: charged before it is queued, by the bank's size.
  const payload: ExportPayload = { document_ids: ids, base: opts.base };
  const q = await chargedFor(s, projectId, { recall_units: exportUnits(bank.memory_count) }, async () => {
    const queued = await queueOperation(s, projectId, bankId, EXPORT_DOCUMENTS, payload, {
      onceAmong: ['pending', 'processing'],
    });
    if (!queued.created) throw exportQueued(bankId, queued.operation.id);
    return queued;
  });
  return { operation_id: q.operation.id, status: q.operation.status };
}

/** The 429 of a second export of a bank while one (`id`) is queued. */
const exportQueued = (bankId: string, id: string) =>
  rateLimited(
    'exports_per_bank',
    `an export of bank '${bankId}' is already queued (operation ${id}); retry once it has finished`,
    1,
    1,
    EXPORT_RETRY_SECONDS,
  );

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function factOf(m: Memory, types: Map<string, string>): TransferFact {
  const entityTypes: Record<string, string> = {};
  for (const e of m.entities) entityTypes[e] = types.get(e) ?? 'OTHER';
  return {
    text: m.text,
    source_id: m.id,
    fact_type: m.type,
    context: m.context,
    occurred_start: iso(m.occurred_start),
    occurred_end: iso(m.occurred_end),
    mentioned_at: iso(m.mentioned_at),
    metadata: m.metadata,
    tags: m.tags,
    chunk_index: null,
    entities: m.entities,
    entity_types: entityTypes,
    created_at: iso(m.created_at),
  };
}

/** Consolidation's observations are derived: left out (the importing bank makes its own). */
const consolidated = (m: Memory) => m.type === 'observation' && Array.isArray(m.metadata.source_memory_ids);

/**
 * Every memory of the bank, or of the documents named (one after another, never all at once),
 * oldest first within each; at most MAX_EXPORT_MEMORIES in all, however many documents are named.
 */
async function memoriesOf(
  s: Deps<MemoryStore>,
  projectId: string,
  bankId: string,
  documentIds: string[] | null,
) {
  const pace = pacer();
  const out: Memory[] = [];
  for (const documentId of documentIds ?? [undefined]) {
    const start = out.length;
    let cursor: string | undefined;
    do {
      await pace();
      const page = await s.store.listMemories(
        projectId,
        bankId,
        // Valid memories only: the archive has no curation state, and an invalidated memory
        // imported from it would come back as valid.
        documentId === undefined ? { state: 'valid' } : { documentId, state: 'valid' },
        { limit: PAGE, cursor },
      );
      for (const m of page.items) out.push(m);
      if (out.length > MAX_EXPORT_MEMORIES)
        throw new AppError(
          'validation_error',
          `an export carries at most ${MAX_EXPORT_MEMORIES} memories; export a bigger bank with \`mnemo export\` or name fewer documents`,
        );
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    reverseFrom(out, start);
  }
  return out;
}

/** Reverses `a[start..]` in place (a page listing is newest first). */
function reverseFrom<T>(a: T[], start: number) {
  for (let i = start, j = a.length - 1; i < j; i++, j--) [a[i], a[j]] = [a[j]!, a[i]!];
}

/** Runs an export: reads the bank, writes the archive, stores it (sealed for an encrypted bank). */
export const runExportOperation: OperationRunner<
  Deps<DocumentStore & EntityStore & MemoryStore & TransferArchiveStore, 'now'>
> = async (s, op) => {
  const p = op.payload as ExportPayload;
  const { projectId, bankId } = op;
  const memories = await memoriesOf(s, projectId, bankId, p.document_ids);
  const types = new Map<string, string>();
  for (let offset = 0; ; offset += PAGE) {
    const page = await s.store.listEntities(projectId, bankId, { limit: PAGE, offset });
    for (const e of page.items) types.set(e.name, e.type);
    if (page.items.length < PAGE) break;
  }
  const byDocument = new Map<string, TransferFact[]>();
  const loose: TransferFact[] = [];
  for (const m of memories) {
    if (consolidated(m)) continue;
    const fact = factOf(m, types);
    if (m.document_id === null) loose.push(fact);
    else {
      // Appended in place: copying the list per fact made one big document quadratic.
      const facts = byDocument.get(m.document_id);
      if (facts) facts.push(fact);
      else byDocument.set(m.document_id, [fact]);
    }
  }
  const documents: TransferDocument[] = [];
  for (const [id, facts] of byDocument) {
    const doc = await s.store.getDocument(projectId, bankId, id);
    documents.push({ id, created_at: iso(doc?.created_at ?? null), tags: [], chunks: [], facts });
  }
  const factCount = documents.reduce((n, d) => n + d.facts.length, 0) + loose.length;
  const now = s.now();
  const zip = buildArchive({
    manifest: {
      schema_version: SCHEMA_VERSION,
      source_bank_id: bankId,
      exported_at: now.toISOString(),
      document_count: documents.length,
      fact_count: factCount,
      observation_count: 0,
      archive_type: 'documents',
    },
    documents,
    loose,
  });
  if (zip.length > MAX_ARCHIVE_BYTES)
    throw new AppError(
      'payload_too_large',
      `the archive would be ${zip.length} bytes, more than ${MAX_ARCHIVE_BYTES}; name fewer documents or use \`mnemo export\``,
    );
  const key = archiveKey(bankId);
  const filename = `${bankId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100)}-documents.zip`;
  const saved = await s.store.saveArchive(projectId, bankId, {
    key,
    operation_id: op.id,
    filename,
    byte_size: zip.length,
    sealed: false,
    data: zip,
    expires_at: new Date(now.getTime() + ARCHIVE_TTL_MS),
  });
  if (!saved) throw new AppError('not_found', `bank '${bankId}' not found`);
  await s.store.pruneArchives(projectId, bankId, MAX_ARCHIVES_PER_BANK);
  return {
    result_metadata: {
      download_url: `${p.base}/files/download/${key}`,
      storage_key: key,
      byte_size: zip.length,
      filename,
      expires_at: new Date(now.getTime() + ARCHIVE_TTL_MS).toISOString(),
      document_count: documents.length,
      fact_count: factCount,
    } satisfies z.input<typeof TransferExportResult>,
  };
};
