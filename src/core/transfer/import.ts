import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { RetainItem as RetainItemSchema } from '../../contract/memories.js';
import type { TransferImportResult } from '../../contract/transfer.js';
import { FACT_TYPES, type FactType } from '../../text/fact-type.js';
import { bankForWrite } from '../banks.js';
import { AppError } from '../errors.js';
import { enqueueOperation, type OperationRunner } from '../operations.js';
import { chargeRetain, requireRetainBudget } from '../quotas.js';
import { checkRetainRequest, type RetainItem, type RetainStore } from '../retain/retain.js';
import { runRetainOperation } from '../retain/retain-async.js';
import type { Deps } from '../services.js';
import type { BankStore, IntakeStore, LimitStore, OperationStore } from '../../store/store.js';
import { readArchive, type TransferFact } from './archive.js';

export const IMPORT_DOCUMENTS = 'import_documents';
export const ON_CONFLICT = ['skip', 'replace', 'new-id'] as const;
export type OnConflict = (typeof ON_CONFLICT)[number];
/** Most facts one import stores. */
export const MAX_IMPORT_FACTS = 50_000;

/** What an import hands back when it completes (decided when it was queued; the contract's shape). */
type ImportOutcome = z.output<typeof TransferImportResult>;

/** The queued Retain of an import, and what it reports. */
interface ImportPayload {
  items: (Omit<RetainItem, 'timestamp'> & { timestamp?: string })[];
  outcome: ImportOutcome;
}

const TYPES = new Set<string>(FACT_TYPES);

/** The Retain item of an archived fact: its text, type, dates, tags, metadata and entities, as they were. */
function itemOf(
  f: TransferFact,
  documentId: string | undefined,
  where: string,
): ImportPayload['items'][number] {
  const mentioned = f.mentioned_at ?? f.event_date ?? null;
  const types = f.entity_types ?? {};
  const item = {
    content: f.text,
    fact_type: (TYPES.has(f.fact_type) ? f.fact_type : 'world') as FactType,
    ...(f.context ? { context: f.context } : {}),
    ...(mentioned ? { timestamp: mentioned } : {}),
    ...(f.tags?.length ? { tags: [...new Set(f.tags)] } : {}),
    ...(f.metadata && Object.keys(f.metadata).length ? { metadata: f.metadata } : {}),
    ...(f.entities?.length
      ? { entities: [...new Set(f.entities)].map((text) => ({ text, type: types[text] ?? 'OTHER' })) }
      : {}),
    resolve_entities: false,
    ...(documentId === undefined ? {} : { document_id: documentId }),
  };
  // The HTTP Retain's own checks (lengths, counts, metadata depth): an archive gets no more room.
  const r = RetainItemSchema.safeParse(item);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new AppError(
      'validation_error',
      `${where}: ${issue?.path.join('.') ?? ''} ${issue?.message ?? 'invalid'}`,
      {
        details: [{ path: `file.${where}`, message: issue?.message ?? 'invalid' }],
      },
    );
  }
  return {
    ...item,
    verbatim: { occurred_start: f.occurred_start ?? null, occurred_end: f.occurred_end ?? null },
  };
}

/**
 * Queues the import of an archive into the bank. A project with its Retain budget spent is a 429
 * before the archive is read. Everything is checked before anything is written or charged: the
 * archive (caps, layout, every fact as a Retain item), the number of facts, then the project's
 * quotas. Documents already in the bank are skipped, replaced, or
 * imported under a new id (`on_conflict`), decided now. The facts are stored as they were (no
 * extraction, no model call) by one queued Retain.
 */
export async function queueImport(
  s: Deps<BankStore & IntakeStore & LimitStore & OperationStore, 'limitDefaults' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  zip: Uint8Array,
  onConflict: OnConflict,
) {
  await requireRetainBudget(s, projectId);
  const archive = readArchive(zip);
  const facts = archive.documents.reduce((n, d) => n + d.facts.length, 0) + archive.loose.length;
  if (facts > MAX_IMPORT_FACTS)
    throw new AppError(
      'payload_too_large',
      `an import stores at most ${MAX_IMPORT_FACTS} facts (this archive has ${facts})`,
    );
  const ids = [...new Set(archive.documents.map((d) => d.id))];
  const existing = new Set((await s.store.documentHashes(projectId, bankId, ids)).keys());
  const items: ImportPayload['items'] = [];
  const outcome: ImportOutcome = {
    documents_imported: 0,
    documents_skipped: 0,
    facts_imported: 0,
    observations_imported: 0,
    observations_skipped: archive.observations,
  };
  const seen = new Set<string>();
  archive.documents.forEach((d, i) => {
    let target: string = d.id;
    if (existing.has(d.id) || seen.has(d.id)) {
      if (onConflict === 'skip') {
        outcome.documents_skipped++;
        return;
      }
      if (onConflict === 'new-id') target = randomUUID();
    }
    seen.add(target);
    // Every fact of a document in replace mode: together they replace what the bank holds under the id.
    for (const [k, f] of d.facts.entries()) items.push(itemOf(f, target, `documents[${i}].facts[${k}]`));
    outcome.documents_imported++;
  });
  for (const [k, f] of archive.loose.entries()) items.push(itemOf(f, undefined, `loose_facts[${k}]`));
  outcome.facts_imported = items.length;
  if (items.length === 0) {
    await bankForWrite(s, projectId, bankId, {});
    const op = await enqueueOperation(s, projectId, bankId, IMPORT_DOCUMENTS, { items, outcome });
    return { operation_id: op.id, status: op.status };
  }
  checkRetainRequest({
    items: items.map((it) => ({ ...it, timestamp: it.timestamp ? new Date(it.timestamp) : undefined })),
  });
  const refund = await chargeRetain(s, projectId, items);
  try {
    await bankForWrite(s, projectId, bankId, {});
    const payload: ImportPayload = { items, outcome };
    const op = await enqueueOperation(s, projectId, bankId, IMPORT_DOCUMENTS, payload, {
      itemsCount: items.length,
      charge: refund.handOver(items, true),
    });
    // Queued: the operation holds the charge, and gives back what it does not store if it fails.
    refund.handOver(items);
    return { operation_id: op.id, status: op.status };
  } catch (err) {
    await refund();
    throw err;
  }
}

/** Runs an import: the queued Retain, slice by slice; its outcome once the last slice is stored. */
export const runImportOperation: OperationRunner<
  Deps<RetainStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue'>
> = async (s, op) => {
  const p = op.payload as ImportPayload;
  if (p.items.length === 0) return { result_metadata: { ...p.outcome } };
  const r = await runRetainOperation(s, op);
  return r.more === undefined ? { ...r, result_metadata: { ...p.outcome } } : r;
};
