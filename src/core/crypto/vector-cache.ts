import type { Hit, StoredVector, VectorStore } from '../../store/store.js';
import type { MemoryFilter } from '../types.js';
import type { BankCodec } from './codec.js';

/** Default bound of the decrypted vectors one process keeps (`MNEMO_VECTOR_CACHE_MB`). */
export const DEFAULT_VECTOR_CACHE_MB = 256;

/** Bytes a memory costs in the cache besides its floats (id, tags, object headers): an estimate. */
const ENTRY_OVERHEAD = 160;

/** One memory of an encrypted bank, as searched in memory: its unit vector and filter columns. */
interface Entry {
  id: string;
  seq: number;
  type: string;
  documentId: string | null;
  /** Epoch ms; NaN when not set (a `mentionedBefore` filter then drops it, as SQL does). */
  mentioned: number;
  tags: string[];
  /** Scaled to unit length; null for a memory without a vector (or a zero one). */
  vector: Float32Array | null;
}

/** A bank's vectors as of some committed state of the database. */
class BankVectors {
  readonly entries = new Map<string, Entry>();
  maxSeq = 0;
  bytes = 0;
  constructor(
    /** The bank's wrapped data key: a recreated bank (or a rotated key) starts afresh. */
    readonly keyId: string,
    public version: number,
    public generation: number,
  ) {}

  add(e: Entry): void {
    const old = this.entries.get(e.id);
    if (old) this.bytes -= entryBytes(old);
    this.entries.set(e.id, e);
    this.bytes += entryBytes(e);
    if (e.seq > this.maxSeq) this.maxSeq = e.seq;
  }

  keepOnly(ids: Set<string>): void {
    for (const [id, e] of this.entries) {
      if (ids.has(id)) continue;
      this.entries.delete(id);
      this.bytes -= entryBytes(e);
    }
  }
}

const entryBytes = (e: Entry) => ENTRY_OVERHEAD + (e.vector?.byteLength ?? 0);

function unit(v: Float32Array): Float32Array | null {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (!(n > 0) || !Number.isFinite(n)) return null;
  const s = 1 / Math.sqrt(n);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * s;
  return out;
}

/** A stored vector opened: the sealed form with the bank's codec, the plain form parsed. */
export function openStoredVector(codec: BankCodec | null, r: StoredVector): Float32Array | null {
  if (r.embedding_sealed) {
    if (!codec) throw new Error(`memory ${r.id} holds a sealed vector but its bank has no data key`);
    return codec.openVector(r.id, r.embedding_sealed);
  }
  return r.embedding ? Float32Array.from(JSON.parse(r.embedding) as number[]) : null;
}

function toEntry(codec: BankCodec | null, r: StoredVector): Entry {
  const v = openStoredVector(codec, r);
  return {
    id: r.id,
    seq: r.seq,
    type: r.type,
    documentId: r.document_id,
    mentioned: r.mentioned_ms ?? Number.NaN,
    tags: r.tags,
    vector: v && unit(v),
  };
}

/** `filterClauses` (store/sql/filters.ts) over an entry. */
function passes(e: Entry, f: MemoryFilter): boolean {
  if (f.types?.length && !(f.types as string[]).includes(e.type)) return false;
  if (f.documentId !== undefined && e.documentId !== f.documentId) return false;
  if (f.mentionedBefore && !(e.mentioned <= f.mentionedBefore.getTime())) return false;
  if (f.tags?.length) {
    const has = (t: string) => e.tags.includes(t);
    switch (f.tagsMatch ?? 'any') {
      case 'any':
        return e.tags.length === 0 || f.tags.some(has);
      case 'all':
        return e.tags.length === 0 || f.tags.every(has);
      case 'any_strict':
        return f.tags.some(has);
      case 'all_strict':
        return f.tags.every(has);
      case 'exact':
        return f.tags.every(has) && e.tags.every((t) => f.tags!.includes(t));
    }
  }
  return true;
}

/** The same set of tags (SQL `a @> b AND a <@ b`). */
const sameTags = (a: string[], b: string[]) => a.every((t) => b.includes(t)) && b.every((t) => a.includes(t));

/**
 * The best `limit` entries by cosine similarity to `query` among those `keep` accepts; equal
 * scores newest first, as the SQL channel orders them.
 */
function nearest(
  entries: Iterable<Entry>,
  query: Float32Array,
  limit: number,
  keep: (e: Entry) => boolean,
): (Hit & { seq: number })[] {
  const q = unit(query);
  const dims = query.length;
  const top: (Hit & { seq: number })[] = [];
  if (limit <= 0) return top;
  for (const e of entries) {
    const v = e.vector;
    if (!v || v.length !== dims || !keep(e)) continue;
    let s = 0;
    if (q) for (let i = 0; i < dims; i++) s += q[i]! * v[i]!;
    else s = Number.NaN;
    if (Number.isNaN(s)) continue;
    if (top.length === limit) {
      const last = top[limit - 1]!;
      if (s < last.score || (s === last.score && e.seq < last.seq)) continue;
      top.pop();
    }
    let i = top.length;
    while (i > 0 && (top[i - 1]!.score < s || (top[i - 1]!.score === s && top[i - 1]!.seq < e.seq))) i--;
    top.splice(i, 0, { id: e.id, score: s, seq: e.seq });
  }
  return top;
}

/**
 * The decrypted vectors of encrypted banks, kept per process and bounded by bytes (least
 * recently used banks go first), so that their semantic search runs in memory over plaintext
 * vectors that never reach the database. A bank's copy is checked against the database on every
 * use (`Store.vectorState`, one small query): a new generation (any write) loads the memories
 * written since (by seq: writers of a bank hold its lock, so seqs grow in commit order) and, when
 * the count says some were deleted, drops those; a new vectors version (a re-embed) or another
 * data key reloads it whole. So no process ever searches vectors another process has replaced.
 */
export class VectorCache {
  readonly #banks = new Map<string, BankVectors>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.#bytes;
  }

  /** Forgets every bank (tests, benchmarks: a cold start). */
  clear(): void {
    this.#banks.clear();
    this.#bytes = 0;
  }

  /**
   * The bank's vectors as of the caller's view of the database. Never waits for another caller's
   * queries (on the embedded engine a caller inside a transaction holds the only connection, so
   * waiting for another's refresh could deadlock): each caller reads what it needs, and applies
   * it without an await in between, only when it is newer than what the cache holds.
   */
  async #current(
    store: VectorStore,
    projectId: string,
    bankId: string,
    codec: BankCodec | null,
    keyId: string,
  ): Promise<BankVectors> {
    const key = `${projectId}\u0000${bankId}`;
    const state = await store.vectorState(projectId, bankId);
    if (!state) return new BankVectors(keyId, 0, 0);
    const bank = this.#banks.get(key);
    const same = bank && bank.keyId === keyId && bank.version === state.version;
    if (!bank || !same) {
      const fresh = await this.#load(store, projectId, bankId, codec, keyId, state);
      // Kept unless a newer copy arrived meanwhile (or this reader's snapshot is the older one).
      const now = this.#banks.get(key);
      const older =
        now &&
        now.keyId === keyId &&
        (now.version > fresh.version ||
          (now.version === fresh.version && now.generation >= fresh.generation));
      if (!older) {
        this.#drop(key);
        this.#keep(key, fresh);
      }
      return fresh;
    }
    this.#touch(key, bank);
    // Equal: nothing changed. Older: a reader of an older snapshot uses the newer copy as it is.
    if (state.generation <= bank.generation) return bank;
    const fromSeq = bank.maxSeq;
    const rows = await store.memoryVectors(projectId, bankId, { afterSeq: fromSeq });
    const added = rows.map((r) => toEntry(codec, r));
    const known = new Set(bank.entries.keys());
    for (const e of added) known.add(e.id);
    // Some were deleted (the count is exact: inserts and deletes move it in their transaction).
    const ids = known.size !== state.count ? new Set(await store.memoryIds(projectId, bankId)) : null;
    if (this.#banks.get(key) !== bank || state.generation <= bank.generation) return bank;
    const before = bank.bytes;
    for (const e of added) bank.add(e);
    if (ids) bank.keepOnly(ids);
    bank.generation = state.generation;
    this.#bytes += bank.bytes - before;
    this.#evict(key);
    return bank;
  }

  async #load(
    store: VectorStore,
    projectId: string,
    bankId: string,
    codec: BankCodec | null,
    keyId: string,
    state: { generation: number; version: number },
  ): Promise<BankVectors> {
    const bank = new BankVectors(keyId, state.version, state.generation);
    for (const r of await store.memoryVectors(projectId, bankId, { afterSeq: 0 }))
      bank.add(toEntry(codec, r));
    return bank;
  }

  #keep(key: string, bank: BankVectors): void {
    // A bank bigger than the whole cache is used for this search only.
    if (bank.bytes > this.maxBytes) return;
    this.#banks.set(key, bank);
    this.#bytes += bank.bytes;
    this.#evict(key);
  }

  #touch(key: string, bank: BankVectors): void {
    this.#banks.delete(key);
    this.#banks.set(key, bank);
  }

  #drop(key: string): void {
    const bank = this.#banks.get(key);
    if (!bank) return;
    this.#banks.delete(key);
    this.#bytes -= bank.bytes;
  }

  #evict(keep: string): void {
    for (const key of this.#banks.keys()) {
      if (this.#bytes <= this.maxBytes) return;
      if (key !== keep) this.#drop(key);
    }
    if (this.#bytes > this.maxBytes) this.#drop(keep);
  }

  /** Recall's semantic channel over an encrypted bank: the same hits the SQL channel returns. */
  async search(
    store: VectorStore,
    target: { projectId: string; bankId: string; codec: BankCodec | null; keyId: string },
    vector: Float32Array,
    filter: MemoryFilter,
    limit: number,
  ): Promise<Hit[]> {
    const bank = await this.#current(store, target.projectId, target.bankId, target.codec, target.keyId);
    return nearest(bank.entries.values(), vector, limit, (e) => passes(e, filter)).map(({ id, score }) => ({
      id,
      score,
    }));
  }

  /**
   * `Store.consolidationCandidates` over an encrypted bank: the nearest entries with the same tag
   * set (and before `beforeSeq`), checked against the database's conditions (observation
   * registry, supporting links) in widening rounds until `limit` pass or none are left.
   */
  async consolidationCandidates(
    store: VectorStore,
    target: { projectId: string; bankId: string; codec: BankCodec | null; keyId: string },
    vector: Float32Array,
    opts: { observations: boolean; tags: string[]; beforeSeq: number; limit: number },
  ): Promise<Hit[]> {
    const { projectId, bankId } = target;
    const bank = await this.#current(store, projectId, bankId, target.codec, target.keyId);
    if (opts.observations) {
      // Observations are few: the database names them, the cache scores them.
      const ids = new Set(await store.consolidationEligible(projectId, bankId, null, opts));
      const pool = [...ids].flatMap((id) => bank.entries.get(id) ?? []);
      return nearest(pool, vector, opts.limit, () => true).map(({ id, score }) => ({ id, score }));
    }
    const keep = (e: Entry) => e.seq < opts.beforeSeq && sameTags(e.tags, opts.tags);
    for (let k = Math.max(opts.limit * 4, 16); ; k *= 4) {
      const near = nearest(bank.entries.values(), vector, k, keep);
      const ok = new Set(
        await store.consolidationEligible(
          projectId,
          bankId,
          near.map((h) => h.id),
          opts,
        ),
      );
      const hits = near.filter((h) => ok.has(h.id));
      if (hits.length >= opts.limit || near.length < k) {
        return hits.slice(0, opts.limit).map(({ id, score }) => ({ id, score }));
      }
    }
  }
}
