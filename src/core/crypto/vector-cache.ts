import type { Hit, StoredVector, VectorStore } from '../../store/store.js';
import type { MemoryFilter } from '../types.js';
import { pacer } from '../pace.js';
import type { BankCodec } from './codec.js';

/** Default bound of the decrypted vectors one process keeps (`MNEMO_VECTOR_CACHE_MB`). */
export const DEFAULT_VECTOR_CACHE_MB = 256;

/** Bytes a memory costs in the cache besides its floats (id, tags, object headers): an estimate. */
const ENTRY_OVERHEAD = 160;

/**
 * Stored vectors read per statement when a bank's copy is loaded or brought up to date: on the
 * embedded engine a statement holds the server's thread, and 100,000 sealed vectors in one
 * took seconds.
 */
const PAGE_ROWS = 1000;

/** One memory of an encrypted bank, as searched in memory: where its unit vector is, and filter columns. */
interface Entry {
  id: string;
  seq: number;
  type: string;
  documentId: string | null;
  /** Epoch ms; NaN when not set (a `mentionedBefore` filter then drops it, as SQL does). */
  mentioned: number;
  tags: string[];
  state: string;
  /** Its unit vector's length, and its place in the bank's slab of that length; -1 for none. */
  dims: number;
  slot: number;
}

/**
 * The unit vectors of one length, side by side in one Float32Array (slot i at i * dims), with
 * the memory each slot holds. One allocation for a bank instead of one per vector, and a scan
 * that reads memory in order.
 */
class Slab {
  data: Float32Array;
  /** Slot i's memory; null once it was removed (until the slab is compacted). */
  readonly owners: (Entry | null)[] = [];
  /** Slots used so far, removed ones included. */
  length = 0;
  #removed = 0;

  constructor(
    readonly dims: number,
    capacity: number,
  ) {
    this.data = new Float32Array(Math.max(capacity, 16) * dims);
  }

  /** Puts `v` scaled to unit length in a new slot of `e`; false for a zero (or non-finite) vector. */
  put(e: Entry, v: Float32Array): boolean {
    let n = 0;
    for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
    if (!(n > 0) || !Number.isFinite(n)) return false;
    const d = this.dims;
    if ((this.length + 1) * d > this.data.length) {
      const grown = new Float32Array(Math.ceil(this.data.length * 1.5) + d);
      grown.set(this.data.subarray(0, this.length * d));
      this.data = grown;
    }
    const s = 1 / Math.sqrt(n);
    const at = this.length * d;
    for (let i = 0; i < d; i++) this.data[at + i] = v[i]! * s;
    this.owners[this.length] = e;
    e.dims = d;
    e.slot = this.length++;
    return true;
  }

  remove(e: Entry): void {
    // Zeroed, not only unowned: a forgotten memory's vector does not linger in the slab.
    this.data.fill(0, e.slot * this.dims, (e.slot + 1) * this.dims);
    this.owners[e.slot] = null;
    e.slot = -1;
    // Mostly holes (deletions, re-embedded memories): the live vectors move together.
    if (++this.#removed > 1024 && this.#removed * 2 > this.length) this.#compact();
  }

  #compact(): void {
    const d = this.dims;
    let to = 0;
    for (let from = 0; from < this.length; from++) {
      const e = this.owners[from];
      if (!e) continue;
      if (from !== to) {
        this.data.copyWithin(to * d, from * d, (from + 1) * d);
        this.owners[to] = e;
        e.slot = to;
      }
      to++;
    }
    this.owners.length = to;
    this.length = to;
    this.#removed = 0;
  }
}

/** A bank's vectors as of some committed state of the database. */
class BankVectors {
  readonly entries = new Map<string, Entry>();
  /** By vector length: a bank holds two while it is re-embedded with another embedder. */
  readonly slabs = new Map<number, Slab>();
  maxSeq = 0;
  constructor(
    /** The bank's wrapped data key: a recreated bank (or a rotated key) starts afresh. */
    readonly keyId: string,
    public version: number,
    public generation: number,
    /** Memories expected: the first slab is made that big. */
    readonly expected = 0,
  ) {}

  /** What the copy takes: each entry's estimate and the slabs as allocated. */
  get bytes(): number {
    let n = this.entries.size * ENTRY_OVERHEAD;
    for (const slab of this.slabs.values()) n += slab.data.byteLength;
    return n;
  }

  add(e: Entry, v: Float32Array | null): void {
    const old = this.entries.get(e.id);
    if (old) this.#forget(old);
    this.entries.set(e.id, e);
    if (v) {
      let slab = this.slabs.get(v.length);
      if (!slab) {
        slab = new Slab(v.length, this.slabs.size ? 0 : this.expected - this.entries.size + 1);
        this.slabs.set(v.length, slab);
      }
      slab.put(e, v);
    }
    if (e.seq > this.maxSeq) this.maxSeq = e.seq;
  }

  /** Zeroes every vector (the copy is dropped: nothing of it lingers until collected). */
  wipe(): void {
    for (const slab of this.slabs.values()) slab.data.fill(0);
  }

  /** Removes these memories; how many it held. */
  removeIds(ids: Iterable<string>): number {
    let n = 0;
    for (const id of ids) {
      const e = this.entries.get(id);
      if (e) {
        this.#forget(e);
        n++;
      }
    }
    return n;
  }

  keepOnly(ids: Set<string>): void {
    for (const e of this.entries.values()) if (!ids.has(e.id)) this.#forget(e);
  }

  #forget(e: Entry): void {
    this.entries.delete(e.id);
    if (e.slot >= 0) this.slabs.get(e.dims)!.remove(e);
  }
}

/** A stored vector opened: the sealed form with the bank's codec, the plain form parsed. */
export function openStoredVector(codec: BankCodec | null, r: StoredVector): Float32Array | null {
  if (r.embedding_sealed) {
    if (!codec) throw new Error(`memory ${r.id} holds a sealed vector but its bank has no data key`);
    return codec.openVector(r.id, r.embedding_sealed);
  }
  return r.embedding ? Float32Array.from(JSON.parse(r.embedding) as number[]) : null;
}

const toEntry = (r: StoredVector): Entry => ({
  id: r.id,
  seq: r.seq,
  type: r.type,
  documentId: r.document_id,
  mentioned: r.mentioned_ms ?? Number.NaN,
  tags: r.tags,
  state: r.state,
  dims: 0,
  slot: -1,
});

/**
 * Reads the bank's stored vectors after `afterSeq` a page per statement, and opens them (a
 * decryption each) letting the event loop take turns: `each` gets every memory with its vector.
 */
async function readVectors(
  store: VectorStore,
  projectId: string,
  bankId: string,
  codec: BankCodec | null,
  afterSeq: number,
  each: (e: Entry, v: Float32Array | null) => void,
): Promise<void> {
  const pace = pacer();
  for (let after = afterSeq; ; ) {
    const rows = await store.memoryVectors(projectId, bankId, { afterSeq: after, limit: PAGE_ROWS });
    for (const r of rows) {
      await pace();
      each(toEntry(r), openStoredVector(codec, r));
    }
    if (rows.length < PAGE_ROWS) return;
    after = rows.at(-1)!.seq;
    await pace();
  }
}

/** `filterClauses` (store/sql/filters.ts) over an entry. */
function passes(e: Entry, f: MemoryFilter): boolean {
  if (f.types?.length && !(f.types as string[]).includes(e.type)) return false;
  if (f.documentId !== undefined && e.documentId !== f.documentId) return false;
  if (f.mentionedBefore && !(e.mentioned <= f.mentionedBefore.getTime())) return false;
  if (f.state && f.state !== 'all' && e.state !== f.state) return false;
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
 * The best `limit` memories of the bank (of `pool` when given) by cosine similarity to `query`
 * among those `keep` accepts; equal scores newest first, as the SQL channel orders them.
 */
function nearest(
  bank: BankVectors,
  query: Float32Array,
  limit: number,
  keep: (e: Entry) => boolean,
  pool?: Iterable<Entry>,
): (Hit & { seq: number })[] {
  const dims = query.length;
  const slab = bank.slabs.get(dims);
  const top: (Hit & { seq: number })[] = [];
  let n = 0;
  for (let i = 0; i < dims; i++) n += query[i]! * query[i]!;
  // A zero query scores nothing (NaN in SQL): no hits.
  if (limit <= 0 || !slab || !(n > 0) || !Number.isFinite(n)) return top;
  const norm = 1 / Math.sqrt(n);
  const q = new Float32Array(dims);
  for (let i = 0; i < dims; i++) q[i] = query[i]! * norm;
  const data = slab.data;
  const offer = (e: Entry) => {
    const at = e.slot * dims;
    let s = 0;
    for (let i = 0; i < dims; i++) s += q[i]! * data[at + i]!;
    if (Number.isNaN(s)) return;
    if (top.length === limit) {
      const last = top[limit - 1]!;
      if (s < last.score || (s === last.score && e.seq < last.seq)) return;
      top.pop();
    }
    let i = top.length;
    while (i > 0 && (top[i - 1]!.score < s || (top[i - 1]!.score === s && top[i - 1]!.seq < e.seq))) i--;
    top.splice(i, 0, { id: e.id, score: s, seq: e.seq });
  };
  if (pool) {
    for (const e of pool) if (e.slot >= 0 && e.dims === dims && keep(e)) offer(e);
  } else {
    for (let i = 0; i < slab.length; i++) {
      const e = slab.owners[i];
      if (e && keep(e)) offer(e);
    }
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
   * Forgets decrypted vectors at once (a forget committed): these memories of the bank, or with
   * `null` the whole bank, their floats zeroed. Returns how many memories' vectors it held.
   */
  forget(projectId: string, bankId: string, memoryIds: string[] | null): number {
    const key = `${projectId}\u0000${bankId}`;
    const bank = this.#banks.get(key);
    if (!bank) return 0;
    if (memoryIds === null) {
      const n = bank.entries.size;
      bank.wipe();
      this.#drop(key);
      return n;
    }
    const before = bank.bytes;
    const n = bank.removeIds(memoryIds);
    this.#bytes += bank.bytes - before;
    return n;
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
    const added: [Entry, Float32Array | null][] = [];
    await readVectors(store, projectId, bankId, codec, bank.maxSeq, (e, v) => added.push([e, v]));
    let known = bank.entries.size;
    for (const [e] of added) if (!bank.entries.has(e.id)) known++;
    // Some were deleted (the count is exact: inserts and deletes move it in their transaction).
    const ids = known !== state.count ? new Set(await store.memoryIds(projectId, bankId)) : null;
    if (this.#banks.get(key) !== bank || state.generation <= bank.generation) return bank;
    const before = bank.bytes;
    for (const [e, v] of added) bank.add(e, v);
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
    state: { generation: number; version: number; count: number },
  ): Promise<BankVectors> {
    const bank = new BankVectors(keyId, state.version, state.generation, state.count);
    await readVectors(store, projectId, bankId, codec, 0, (e, v) => bank.add(e, v));
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
    return nearest(bank, vector, limit, (e) => passes(e, filter)).map(({ id, score }) => ({ id, score }));
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
      return nearest(bank, vector, opts.limit, () => true, pool).map(({ id, score }) => ({ id, score }));
    }
    const keep = (e: Entry) => e.seq < opts.beforeSeq && sameTags(e.tags, opts.tags);
    for (let k = Math.max(opts.limit * 4, 16); ; k *= 4) {
      const near = nearest(bank, vector, k, keep);
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
