import { createHash, randomUUID } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import type { FactType } from '../../text/fact-type.js';
import { termFrequencies } from '../../text/terms.js';
import { effectiveConfig } from '../bank-config.js';
import { bankForWrite } from '../banks.js';
import { scheduleConsolidation } from '../consolidate/schedule.js';
import { EXACT_SEARCH_LIMIT, scheduleBankIndex } from '../recall/bank-index.js';
import { scheduleReembed, staleVectors } from '../reembed.js';
import { AppError } from '../errors.js';
import { checkId } from '../ids.js';
import { chargeRetain } from '../quotas.js';
import { addNeighbourContext } from '../recall/context-terms.js';
import type { Services } from '../services.js';
import type { EntityInput, NewMemory } from '../types.js';
import { applyResolution, resolveEntityNames } from './entities.js';
import { extractItem } from './extract.js';

export interface RetainItem {
  content: string;
  fact_type?: FactType;
  context?: string;
  timestamp?: Date;
  entities?: EntityInput[];
  resolve_entities?: boolean;
  tags?: string[];
  metadata?: Record<string, unknown>;
  document_id?: string;
  update_mode?: 'replace' | 'append';
}

export interface RetainRequest {
  items: RetainItem[];
  document_id?: string;
  space?: string;
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

/** Longest run of item extraction between two turns of the event loop. */
const EXTRACT_SLICE_MS = 20;

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32);

/** A UUID derived from a seed: the same operation always names its memories the same. */
function seededId(seed: string, i: number): string {
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
  if (req.document_id !== undefined) checkId('document id', req.document_id, 'document_id');
  req.items.forEach((it, i) => {
    if (it.document_id !== undefined) checkId('document id', it.document_id, `items.${i}.document_id`);
  });
}

/**
 * Retain: stores each item verbatim (`chunks`), typed, dated and linked to its entities, in one
 * transaction. A repeated document id replaces that document's memories unless an item says
 * `append`.
 */
export async function retain(
  s: Services,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: { idSeed?: string; signal?: AbortSignal } = {},
): Promise<RetainResult> {
  checkRetainRequest(req);
  // Quotas (items per day, stored memories) are charged before anything is written; an
  // operation's run (idSeed) was charged when it was queued.
  const refund = opts.idSeed ? null : await chargeRetain(s, projectId, req.items.length);
  return retainCharged(s, projectId, bankId, req, opts).catch(async (err: unknown) => {
    await refund?.();
    throw err;
  });
}

async function retainCharged(
  s: Services,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: { idSeed?: string; signal?: AbortSignal },
): Promise<RetainResult> {
  const bank = await bankForWrite(s, projectId, bankId, { space: req.space });
  // New memories get the server's vectors; the re-embed brings the older ones over.
  if (staleVectors(s, bank)) await scheduleReembed(s, projectId, bankId);
  await s.store.maintainStatistics();
  const cfg = effectiveConfig(bank.config);
  const now = s.now();
  const docOf = (item: RetainItem) => item.document_id ?? req.document_id ?? null;

  // Documents to replace, and which of them arrive unchanged (same content hash): no work.
  const replacing = new Map<string, RetainItem[]>();
  for (const item of req.items) {
    const doc = docOf(item);
    if (doc !== null && (item.update_mode ?? 'replace') === 'replace')
      replacing.set(doc, [...(replacing.get(doc) ?? []), item]);
  }
  const hashes = new Map([...replacing].map(([doc, items]) => [doc, documentHash(items)]));
  const stored = await s.store.documentHashes(projectId, bankId, [...hashes.keys()]);
  const unchanged = new Set([...hashes].filter(([doc, h]) => stored.get(doc) === h).map(([doc]) => doc));

  const memories: NewMemory[] = [];
  /** Memories whose item asked for entity resolution (the default). */
  const resolvable: NewMemory[] = [];
  const usage = { input: 0, output: 0 };
  let extraction: RetainResult['extraction'] = 'chunks';
  let slice = performance.now();
  for (const [i, item] of req.items.entries()) {
    const doc = docOf(item);
    if (doc !== null && unchanged.has(doc)) continue;
    // Local extraction is synchronous: let other requests in between items, not after 1,000.
    if (performance.now() - slice > EXTRACT_SLICE_MS) {
      await setImmediate();
      slice = performance.now();
    }
    const mentioned = item.timestamp ?? now;
    const out = await extractItem(s, { ...item, mentioned }, cfg, opts.signal);
    extraction = out.extraction;
    usage.input += out.usage.input;
    usage.output += out.usage.output;
    for (const [k, fact] of out.facts.entries()) {
      const indexed = item.context ? `${fact.text}\n${item.context}` : fact.text;
      const memory: NewMemory = {
        id: opts.idSeed ? seededId(opts.idSeed, memories.length) : randomUUID(),
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
    await s.store.updateBank(projectId, bankId, { embedder: s.embedder.id });
  const changed = [...replacing.keys()].filter((d) => !unchanged.has(d));
  // An appended document's content is no longer what any hash describes: '' never matches.
  const appended = [...new Set(memories.map((m) => m.document_id))].filter(
    (d): d is string => d !== null && !replacing.has(d),
  );
  const created = await s.store.insertMemories(projectId, bankId, memories, {
    replaceDocuments: changed,
    documents: [
      ...changed.map((id) => ({ id, contentHash: hashes.get(id)! })),
      ...appended.map((id) => ({ id, contentHash: '' })),
    ],
  });
  if (usage.input || usage.output) await s.store.addLlmUsage(projectId, bankId, usage.input, usage.output);
  // Stored already: a failed enqueue only delays consolidation to the next Retain or explicit run.
  if (created > 0) await scheduleConsolidation(s, projectId, bankId).catch(() => undefined);
  // Cheap test first: only a bank past the exact-search size can want an index of its own.
  if (created > 0 && bank.memory_count + created > EXACT_SEARCH_LIMIT)
    await scheduleBankIndex(s, projectId, bankId).catch(() => undefined);
  return {
    success: true,
    async: false,
    bank_id: bankId,
    items_count: req.items.length,
    memories_created: created,
    document_id: req.document_id ?? req.items[0]?.document_id ?? null,
    memory_ids: memories.map((m) => m.id),
    extraction,
  };
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
