import { walkFare } from './budgets.js';
import { requireBank } from './banks.js';
import { notFound } from './errors.js';
import { isUuid } from './ids.js';
import type { Deps } from './services.js';
import type {
  BankStore,
  CurationStore,
  DocumentStore,
  GraphStore,
  LimitStore,
  MemoryStore,
} from '../store/store.js';
import type { Memory, MemoryFilter } from './types.js';

async function findMemory(
  s: Deps<BankStore & MemoryStore>,
  projectId: string,
  bankId: string,
  id: string,
): Promise<Memory> {
  await requireBank(s, projectId, bankId);
  const [m] = isUuid(id) ? await s.store.getMemories(projectId, bankId, [id]) : [];
  if (!m) throw notFound(`memory '${id}'`);
  return m;
}

/** One memory with its entities and tags. */
export async function getMemory(
  s: Deps<BankStore & MemoryStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  return findMemory(s, projectId, bankId, id);
}

/** One step of a memory's history. */
export interface HistoryEvent {
  at: Date;
  /**
   * `retained`: stored by Retain; `consolidated`: written by consolidation as an observation;
   * `rewritten`: its text last changed by consolidation; `source_added`: a memory became one of
   * its sources (`relation` supports or contradicts it); `consolidated_into`: it became a source
   * of an observation; `invalidated`, `restored`, `edited` (`fields`): a client curated it.
   */
  event:
    | 'retained'
    | 'consolidated'
    | 'rewritten'
    | 'source_added'
    | 'consolidated_into'
    | 'invalidated'
    | 'restored'
    | 'edited';
  memory_id?: string;
  relation?: string;
  text?: string;
  fields?: string[];
}

/**
 * What mnemo knows of a memory's past, oldest first: when it was stored or written by
 * consolidation and last rewritten, the sources consolidation gave it, and the observations it
 * went into (with their text and its source's text). A rewrite's earlier text is not kept, and a
 * deleted memory has no history (it is 404).
 */
export async function memoryHistory(
  s: Deps<BankStore & CurationStore & GraphStore & MemoryStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const m = await findMemory(s, projectId, bankId, id);
  const lineage = await s.store.memoryLineage(projectId, bankId, id);
  const related = await s.store.getMemories(projectId, bankId, [
    ...new Set([...lineage.sources.map((x) => x.memory_id), ...lineage.usedBy.map((x) => x.observation_id)]),
  ]);
  const textOf = new Map(related.map((r) => [r.id, r.text]));
  const events: HistoryEvent[] = [];
  if (lineage.observation) {
    events.push({ at: lineage.observation.created_at, event: 'consolidated' });
    if (lineage.observation.updated_at.getTime() > lineage.observation.created_at.getTime())
      events.push({ at: lineage.observation.updated_at, event: 'rewritten' });
  } else {
    events.push({ at: m.created_at, event: 'retained' });
  }
  for (const x of lineage.sources)
    events.push({
      at: x.created_at,
      event: 'source_added',
      memory_id: x.memory_id,
      relation: x.relation,
      text: textOf.get(x.memory_id),
    });
  for (const x of lineage.usedBy)
    events.push({
      at: x.created_at,
      event: 'consolidated_into',
      memory_id: x.observation_id,
      relation: x.relation,
      text: textOf.get(x.observation_id),
    });
  for (const x of await s.store.curationEvents(projectId, bankId, id))
    events.push(
      x.event === 'edited' ? { at: x.at, event: x.event, fields: x.fields } : { at: x.at, event: x.event },
    );
  events.sort((a, b) => a.at.getTime() - b.at.getTime());
  return { memory_id: m.id, bank_id: bankId, type: m.type, text: m.text, history: events };
}

/** Links drawn at most, whatever the number of memories. */
const MAX_EDGES = 5000;

/**
 * The memory graph: the newest `limit` memories matching the filter as nodes, their links as
 * edges (observation to source, shared entities), and a table row for each; `total_units`
 * counts every matching memory.
 */
export async function memoryGraph(
  s: Deps<BankStore & DocumentStore & GraphStore & LimitStore & MemoryStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  filter: MemoryFilter & { q?: string },
  limit: number,
) {
  await requireBank(s, projectId, bankId);
  const page =
    limit > 0 ? await s.store.listMemories(projectId, bankId, filter, { limit, offset: 0 }) : { items: [] };
  const ids = page.items.map((m) => m.id);
  const edges = await s.store.memoryLinks(projectId, bankId, ids, MAX_EDGES);
  return {
    nodes: page.items.map((m) => ({ id: m.id, label: m.text, type: m.type })),
    edges,
    table_rows: page.items.map((m) => ({
      id: m.id,
      text: m.text,
      type: m.type,
      context: m.context,
      date: m.mentioned_at ?? m.created_at,
      entities: m.entities.join(', '),
      tags: m.tags,
      document_id: m.document_id,
    })),
    total_units: await s.store.countMemories(projectId, bankId, filter, walkFare(s, projectId)),
    limit,
  };
}

/**
 * A document's pieces in the order they were retained: its memories (with the default `chunks`
 * extraction, the document's text in pieces; with extraction, the facts taken from it; mnemo
 * keeps no raw text beside them). Offset-paged over that order.
 */
export async function documentChunks(
  s: Deps<BankStore & DocumentStore & LimitStore & MemoryStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  documentId: string,
  page: { limit: number; offset: number },
) {
  await requireBank(s, projectId, bankId);
  if (!(await s.store.getDocument(projectId, bankId, documentId))) throw notFound(`document '${documentId}'`);
  const filter = { documentId };
  const pay = walkFare(s, projectId);
  const total = await s.store.countMemories(projectId, bankId, filter, pay);
  // The store lists newest first: the oldest-first page is read from the other end.
  const take = Math.max(Math.min(page.limit, total - page.offset), 0);
  const from = Math.max(total - page.offset - take, 0);
  const items = take
    ? (
        await s.store.listMemories(projectId, bankId, filter, { limit: take, offset: from, pay })
      ).items.reverse()
    : [];
  return {
    items: items.map((m, i) => ({
      chunk_id: m.id,
      document_id: documentId,
      bank_id: bankId,
      chunk_index: page.offset + i,
      chunk_text: m.text,
      created_at: m.created_at,
    })),
    total,
    limit: page.limit,
    offset: page.offset,
  };
}
