import { createHash, randomUUID } from 'node:crypto';
import { termFrequencies } from '../../text/terms.js';
import { effectiveConfig } from '../bank-config.js';
import { bankForWrite, staleVectors } from '../banks.js';
import { chargeRefundable, withMeteredModel } from '../budgets.js';
import { LlmLedger } from '../llm-ledger.js';
import { scheduleConsolidation } from '../consolidate/schedule.js';
import { EXACT_SEARCH_LIMIT, scheduleBankIndex } from '../recall/bank-index.js';
import { scheduleReembed } from '../reembed.js';
import { AppError, invalid } from '../errors.js';
import { checkId } from '../ids.js';
import { pacer } from '../pace.js';
import { checkStorable } from '../storable.js';
import { sliceEnd } from './slices.js';
import { chargeRetain, insertWithinQuota } from '../quotas.js';
import { addNeighbourContext } from '../recall/context-terms.js';
import type { Deps } from '../services.js';
import type {
  BankIndexStore,
  BankStore,
  IntakeStore,
  LimitStore,
  MemoryStore,
  OperationStore,
  SearchStore,
  WebhookStore,
  DocumentStore,
  LlmRequestStore,
} from '../../store/store.js';
import type { NewMemory } from '../types.js';
import type { RetainItem } from './item.js';
import { applyResolution, resolveEntityNames } from './entities.js';
import { extractItem } from './extract.js';
import { documentSource } from './source.js';
import { retainCompleted } from '../webhooks/events.js';

/**
 * What one slice of a Retain uses: it reads the bank, what is stored already (intake) and its
 * budgets; it writes memories, the ledger of its model calls, and queues the follow-up work
 * (consolidation, bank index, re-embed).
 */
export type RetainSliceStore = BankIndexStore &
  BankStore &
  IntakeStore &
  LimitStore &
  LlmRequestStore &
  MemoryStore &
  OperationStore &
  SearchStore;

/** A whole Retain: its slices, then its `retain.completed` events (with the documents' counts). */
export type RetainStore = RetainSliceStore & DocumentStore & WebhookStore;

export type { RetainItem } from './item.js';

/** The one fact of a `verbatim` item. */
function verbatimFact(item: RetainItem & { verbatim: NonNullable<RetainItem['verbatim']> }) {
  const at = (v: string | null) => (v === null ? null : new Date(v));
  return {
    extraction: 'chunks' as const,
    facts: [
      {
        text: item.content,
        type: item.fact_type ?? ('world' as const),
        entities: [...(item.entities ?? [])],
        occurred_start: at(item.verbatim.occurred_start),
        occurred_end: at(item.verbatim.occurred_end),
        chunk: null,
      },
    ],
  };
}

/**
 * One slice of a big queued Retain: items [start, end) of the request, stored in their own
 * transaction. `firstMemory` is how many memories the earlier slices made (memory ids go on
 * from there); `unchanged` is the documents the first slice found unchanged.
 */
export interface RetainSlice {
  start: number;
  end: number;
  firstMemory: number;
  unchanged: string[];
}

export interface RetainRequest {
  items: RetainItem[];
  document_id?: string;
  space?: string;
  /** Extract the documents again even where their content is unchanged (documents/{id}/reprocess). */
  reprocess?: boolean;
}

export interface RetainResult {
  success: true;
  /** Hindsight-compatible fields beside the spec's. */
  async: false;
  bank_id: string;
  items_count: number;
  memories_created: number;
  document_id: string | null;
  memory_ids: string[];
  extraction: 'chunks' | 'local' | 'llm';
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32);

/** A UUID derived from a seed: the same operation always names its memories the same. */
function seededId(seed: string, i: number | string): string {
  const h = createHash('sha256').update(`${seed}:${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Checks what the schema cannot: non-empty items and id shapes. */
export function checkRetainRequest(req: RetainRequest): void {
  if (req.items.length === 0) {
    throw new AppError('validation_error', 'items must not be empty', {
      details: [{ path: 'items', message: 'at least one item is required' }],
    });
  }
  // Document ids are compared in NFC, like bank ids (api/nfc.ts).
  if (req.document_id !== undefined)
    req.document_id = checkId('document id', req.document_id, 'document_id').normalize('NFC');
  req.items.forEach((it, i) => {
    if (it.document_id !== undefined)
      it.document_id = checkId('document id', it.document_id, `items.${i}.document_id`).normalize('NFC');
    // Nothing to remember: refused here rather than stored as an empty memory.
    if (it.content.trim() === '')
      throw invalid(`items.${i}.content`, 'content must contain text, not only white space');
  });
  // Before the bank is created: a request refused later would leave an empty bank behind.
  checkStorable(req.items, 'items');
}

/** Options of one Retain run; see `retain`. */
export interface RetainOptions {
  /** An operation's id: it runs one slice of a queued Retain (charged when it was queued). */
  idSeed?: string;
  /**
   * Names the memories of a request on the request path (derived from its Idempotency-Key):
   * a retry of a request that failed midway finds the slices it stored and skips them.
   */
  seed?: string;
  signal?: AbortSignal;
  slice?: RetainSlice;
  /**
   * The slice of a queued Retain (`idSeed`, its operation) run by the worker holding its lease:
   * the slice's write records on the operation, in its own transaction, where the operation
   * stands once the slice is stored (`progress`, from the memories it made), and writes nothing
   * once the worker no longer holds it (a cancel, a takeover).
   */
  lease?: { workerId: string; progress: (made: number) => unknown };
}

/** What one slice did, beside its part of the answer. */
interface SliceOutcome {
  result: RetainResult;
  /** Whether any item was extracted (not all of its documents unchanged). */
  extracted: boolean;
  /** The slice was stored already, by an earlier attempt of the same request. */
  seen: boolean;
}

/**
 * Retain: stores each item verbatim (`chunks`), typed, dated and linked to its entities. A
 * repeated document id replaces that document's memories unless an item says `append`.
 * On the request path the items are written in bounded slices (`sliceEnd`), each in its own
 * transaction, with a turn of the event loop between them, so a big batch never holds the
 * bank, the embedded engine or other tenants' requests for its whole length. A document whose
 * items span slices is replaced by the slice with its first item and its hash recorded by the
 * one with its last. A failure midway leaves the slices before it stored: retried with the same
 * Idempotency-Key (`seed`) the request skips them and converges on what one run would store;
 * retried without, documents converge (a half-written one is replaced again, a finished one is
 * unchanged) and items without a document are stored again.
 */
export async function retain(
  s: Deps<RetainStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: RetainOptions = {},
): Promise<RetainResult> {
  // An operation's run (idSeed) was charged when it was queued, and its request checked then and
  // on its first slice (runRetainOperation): not again for each of its slices.
  if (opts.slice || opts.idSeed) return (await retainSliceOf(s, projectId, bankId, req, opts)).result;
  checkRetainRequest(req);
  // Quotas (items per day, stored memories) and cost are charged before anything is written.
  const refund = await chargeRetain(s, projectId, req.items);
  const seed = opts.seed ?? randomUUID();
  const n = req.items.length;
  /** Items whose slice is stored, and the items an earlier attempt stored (charged then). */
  let stored = 0;
  const storedBefore: RetainItem[] = [];
  try {
    const unchanged = await unchangedDocuments(s, projectId, bankId, req);
    const ids: string[] = [];
    let extraction: RetainResult['extraction'] = 'chunks';
    for (let start = 0; start < n; ) {
      // Other requests (and the embedded engine's other users) get a turn between transactions.
      if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const end = sliceEnd(req.items, start);
      const out = await retainSliceOf(s, projectId, bankId, req, {
        seed,
        signal: opts.signal,
        slice: { start, end, firstMemory: ids.length, unchanged },
        last: end === n,
        createdBefore: ids.length,
      });
      ids.push(...out.result.memory_ids);
      if (out.extracted) extraction = out.result.extraction;
      if (out.seen) storedBefore.push(...req.items.slice(start, end));
      stored = end;
      start = end;
    }
    await refund(storedBefore);
    await retainCompleted(s, projectId, bankId, seed, req);
    return {
      success: true,
      async: false,
      bank_id: bankId,
      items_count: n,
      // Every memory of the request, stored by this attempt or by an earlier one of the same request.
      memories_created: ids.length,
      document_id: req.document_id ?? req.items[0]?.document_id ?? null,
      memory_ids: ids,
      extraction,
    };
  } catch (err) {
    // Refused (a missing space, a spent entity budget, the stored quota) or failed midway: what
    // it did not store costs nothing, what it stored stays charged.
    await refund([...storedBefore, ...req.items.slice(stored)]);
    throw err;
  }
}

/**
 * The documents a request replaces, each with its items in order. Appended in place: copying a
 * document's list per item made one document of many items quadratic, in every slice.
 */
function replacedDocuments(req: RetainRequest): Map<string, RetainItem[]> {
  const replacing = new Map<string, RetainItem[]>();
  for (const item of req.items) {
    const doc = item.document_id ?? req.document_id ?? null;
    if (doc === null || (item.update_mode ?? 'replace') !== 'replace') continue;
    const items = replacing.get(doc);
    if (items) items.push(item);
    else replacing.set(doc, [item]);
  }
  return replacing;
}

/** One slice (or a whole request that is one): extract, resolve, embed, store in one transaction. */
async function retainSliceOf(
  s: Deps<RetainSliceStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: RetainOptions & {
    /** Request path: whether this is the request's last slice (it schedules the follow-up work). */
    last?: boolean;
    /** Request path: memories the earlier slices made (for the follow-up work of the last one). */
    createdBefore?: number;
  },
): Promise<SliceOutcome> {
  const slice = opts.slice;
  const bank = await bankForWrite(s, projectId, bankId, { space: req.space });
  // New memories get the server's vectors; the re-embed brings the older ones over.
  if (staleVectors(s, bank)) await scheduleReembed(s, projectId, bankId);
  await s.store.maintainStatistics();
  const cfg = effectiveConfig(bank.config);
  const now = s.now();
  const docOf = (item: RetainItem) => item.document_id ?? req.document_id ?? null;

  // Documents to replace, and which of them arrive unchanged (same content hash): no work.
  const replacing = replacedDocuments(req);
  const hashes = new Map([...replacing].map(([doc, items]) => [doc, documentHash(items)]));
  const unchanged = new Set(
    slice ? slice.unchanged : req.reprocess ? [] : await unchangedOf(s, projectId, bankId, hashes),
  );
  // A document whose items span slices is replaced by the slice with its first item; the
  // slices after it add to it, and the one with its last item records its hash.
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  req.items.forEach((item, i) => {
    const doc = docOf(item);
    if (doc === null || !replacing.has(doc)) return;
    if (!first.has(doc)) first.set(doc, i);
    last.set(doc, i);
  });
  const inSlice = (i: number) => !slice || (i >= slice.start && i < slice.end);

  // A queued Retain (idSeed) was admitted by awaitBudget: what it incurs is counted regardless.
  const mode = opts.idSeed ? 'job' : 'request';
  // Every model call is recorded for the bank (llm-requests), settled once extraction is over.
  const ledger = new LlmLedger(s, projectId, bankId, 'retain');
  const metered = withMeteredModel(ledger.services(s, 'extraction'), projectId, mode);
  const memories: NewMemory[] = [];
  /** Memories whose item asked for entity resolution (the default). */
  const resolvable: NewMemory[] = [];
  let extraction: RetainResult['extraction'] = 'chunks';
  // An operation numbers its memories in order; a request names them by item and fact, so a
  // retry whose earlier attempt finished some documents (unchanged now) names the rest the same.
  // The bank's creation time is part of a request's seed: a bank deleted and created again
  // never gets the ids of the old one's memories back.
  const requestSeed = opts.seed && `${opts.seed}:${new Date(bank.created_at).toISOString()}`;
  const memoryId = (i: number, k: number) =>
    opts.idSeed
      ? seededId(opts.idSeed, (slice?.firstMemory ?? 0) + memories.length)
      : requestSeed
        ? seededId(requestSeed, `${i}.${k}`)
        : randomUUID();
  let extracted = false;
  const pace = pacer();
  try {
    for (const [i, item] of req.items.entries()) {
      if (!inSlice(i)) continue;
      await pace();
      const doc = docOf(item);
      if (doc !== null && unchanged.has(doc)) continue;
      const mentioned = item.timestamp ?? now;
      const out = item.verbatim
        ? verbatimFact({ ...item, verbatim: item.verbatim })
        : await extractItem(metered, { ...item, mentioned }, cfg, opts.signal);
      extraction = out.extraction;
      extracted = true;
      for (const [k, fact] of out.facts.entries()) {
        const indexed = item.context ? `${fact.text}\n${item.context}` : fact.text;
        const memory: NewMemory = {
          id: memoryId(i, k),
          type: fact.type,
          text: fact.text,
          context: item.context ?? null,
          occurred_start: fact.occurred_start,
          occurred_end: fact.occurred_end,
          mentioned_at: mentioned,
          tags: [...new Set(item.tags ?? [])],
          metadata: item.metadata ?? {},
          document_id: doc,
          chunk_id: fact.chunk === null && out.facts.length === 1 ? null : `${i}.${k}`,
          content_hash: hash(fact.text),
          embedding: new Float32Array(0),
          terms: termFrequencies(indexed),
          entities: fact.entities,
        };
        memories.push(memory);
        if (item.resolve_entities !== false) resolvable.push(memory);
      }
    }
  } finally {
    // Spent tokens count whatever happens next (a refused quota, a failed write).
    await ledger.settle();
  }
  // Extracted entities are known now: charged before they are resolved and stored, beyond those
  // the items gave (charged with the request, see chargeRetain).
  let entities = 0;
  for (const m of memories) entities += m.entities.length;
  for (const [i, item] of req.items.entries()) if (inSlice(i)) entities -= item.entities?.length ?? 0;
  // Given back when the slice then stores nothing (its write refused or failed): a retry extracts
  // and charges them again.
  const refundEntities =
    entities > 0
      ? await chargeRefundable(s, projectId, { entities }, mode === 'job' ? 'force' : 'check')
      : null;
  try {
    return await storeSlice();
  } catch (err) {
    await refundEntities?.();
    throw err;
  }

  async function storeSlice(): Promise<SliceOutcome> {
    await addNeighbourContext(s, projectId, bankId, memories);

    const resolved = await resolveEntityNames(
      s,
      projectId,
      bankId,
      resolvable.flatMap((m) => m.entities.map((e) => e.text)),
    );
    for (const m of resolvable) m.entities = applyResolution(m.entities, resolved);
    const vectors = memories.length
      ? await s.embedder.embed(
          memories.map((m) => m.text),
          opts.signal,
        )
      : [];
    memories.forEach((m, i) => {
      m.embedding = vectors[i]!;
    });
    if (bank.embedder === null && memories.length)
      await s.store.updateBank(projectId, bankId, { embedderIfUnset: s.embedder.id });
    const changed = [...replacing.keys()].filter((d) => !unchanged.has(d) && inSlice(first.get(d)!));
    /** Changed documents this slice adds to, and of those the ones it completes. */
    const touched = [...replacing.keys()].filter(
      (d) => !unchanged.has(d) && !changed.includes(d) && memories.some((m) => m.document_id === d),
    );
    const complete = (d: string) => inSlice(last.get(d)!);
    // An appended document's content is no longer what any hash describes: '' never matches.
    const appended = [...new Set(memories.map((m) => m.document_id))].filter(
      (d): d is string => d !== null && !replacing.has(d),
    );
    // A completed document keeps what it was retained from (for reprocessing); an appended one no
    // longer has one source, and keeps none.
    const created = await insertWithinQuota(s, projectId, bankId, memories, {
      replaceDocuments: changed,
      dropDerived: req.reprocess === true,
      // A reprocess re-creates a document only while it exists: one forgotten since it was queued stays gone.
      ...(req.reprocess ? { requireDocuments: [...replacing.keys()] } : {}),
      ...(opts.lease && opts.idSeed
        ? {
            operation: {
              id: opts.idSeed,
              workerId: opts.lease.workerId,
              progress: opts.lease.progress(memories.length),
            },
          }
        : {}),
      documents: [
        ...[...changed, ...touched].map((id) =>
          complete(id)
            ? { id, contentHash: hashes.get(id)!, source: documentSource(replacing.get(id)!) }
            : { id, contentHash: '' },
        ),
        ...appended.map((id) => ({ id, contentHash: '', source: null })),
      ],
    });
    // A request's slices schedule the follow-up work once, after the last (what they all made).
    const made = opts.last === undefined ? created : opts.last ? created + (opts.createdBefore ?? 0) : 0;
    // Stored already: a failed enqueue only delays consolidation to the next Retain or explicit run.
    if (made > 0) await scheduleConsolidation(s, projectId, bankId).catch(() => undefined);
    // Cheap test first: only a bank past the exact-search size can want an index of its own.
    if (made > 0 && bank.memory_count + created > EXACT_SEARCH_LIMIT)
      await scheduleBankIndex(s, projectId, bankId).catch(() => undefined);
    const result: RetainResult = {
      success: true,
      async: false,
      bank_id: bankId,
      items_count: req.items.length,
      memories_created: created,
      document_id: req.document_id ?? req.items[0]?.document_id ?? null,
      memory_ids: memories.map((m) => m.id),
      extraction,
    };
    return { result, extracted, seen: memories.length > 0 && created === 0 };
  }
}

/** The documents whose stored content hash says they arrive unchanged. */
async function unchangedOf(
  s: Deps<IntakeStore>,
  projectId: string,
  bankId: string,
  hashes: Map<string, string>,
): Promise<string[]> {
  const stored = await s.store.documentHashes(projectId, bankId, [...hashes.keys()]);
  return [...hashes].filter(([doc, h]) => stored.get(doc) === h).map(([doc]) => doc);
}

/** The documents of a request that a Retain would leave as they are (unchanged content hash). */
export async function unchangedDocuments(
  s: Deps<IntakeStore>,
  projectId: string,
  bankId: string,
  req: RetainRequest,
): Promise<string[]> {
  if (req.reprocess) return [];
  const replacing = replacedDocuments(req);
  return unchangedOf(
    s,
    projectId,
    bankId,
    new Map([...replacing].map(([d, items]) => [d, documentHash(items)])),
  );
}

/** Hash of everything that decides what a document's items store. */
function documentHash(items: RetainItem[]): string {
  return hash(
    JSON.stringify(
      items.map((it) => [
        it.content,
        it.context,
        it.timestamp?.toISOString(),
        it.fact_type,
        it.tags,
        it.metadata,
        it.entities,
      ]),
    ),
  );
}
