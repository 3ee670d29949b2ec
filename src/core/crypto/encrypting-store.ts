import { keywordTerms } from '../../text/terms.js';
import type { BankKeyRecord, Store } from '../../store/store.js';
import { AppError } from '../errors.js';
import { SESSION_KEYS } from '../recall/context-terms.js';
import { entityKey } from '../retain/entities.js';
import type { Directive, Entity, Memory, NewMemory } from '../types.js';
import {
  type BankCodec,
  ENCRYPTION_CHANGED,
  type Field,
  isSealed,
  plainMetadata,
  plainText,
  SEALED_MEMBER,
  sealedMetadata,
  storePlain,
  storePlainMetadata,
} from './codec.js';
import type { Keyring } from './keyring.js';
import { webhookSealing } from './webhook-sealing.js';
import { mentalModelForm, sealedMentalModels } from './sealed-mental-models.js';
import { DEFAULT_VECTOR_CACHE_MB, openStoredVector, VectorCache } from './vector-cache.js';
import { RecentKeys } from './recent-keys.js';

/** Banks with a data key a process remembers as such (`searchChannels`); one forgotten costs a statement. */
const KEYED_BANKS = 10_000;

export interface EncryptionHooks {
  /** A bank's encryption setting flipped: queue the operation that converts its rows. */
  onSwitch(projectId: string, bankId: string): Promise<void>;
}

/** A keyed hash as stored: 32 hex digits per word. */
const HASHED = /^[0-9a-f]{32}( [0-9a-f]{32})*$/;

/** What the sealed metadata member holds: the original metadata and the memory's plaintext terms. */
interface SealedMetadata {
  m: Record<string, unknown>;
  t?: [string, number][];
}

function missingKey(bankId: string): AppError {
  return new AppError(
    'unavailable',
    `bank '${bankId}' is encrypted (managed) but this server has no MNEMO_MASTER_KEY; start it with the master key`,
  );
}

/** The stored (sealed) form of a memory for an encrypted bank. */
export function sealMemory(codec: BankCodec, m: NewMemory): NewMemory {
  return {
    ...m,
    text: codec.seal(m.text, 'text'),
    context: m.context === null ? null : codec.seal(m.context, 'context'),
    metadata: sealMetadata(codec, m.metadata, [...m.terms]),
    content_hash: codec.contentHash(m.content_hash),
    // The vector sealed too: a plain one inverts to the memory's words (nearest-word attack).
    embedding: new Float32Array(0),
    embedding_sealed: m.embedding.length ? codec.sealVector(m.id, m.embedding) : undefined,
    terms: new Map([...m.terms].map(([t, f]) => [codec.term(t), f])),
    entities: m.entities.map((e) => ({
      ...e,
      text: codec.seal(e.text.trim().replace(/\s+/g, ' '), 'entity'),
      key: codec.entityKey(entityKey(e.text)),
      alias: e.alias === undefined ? undefined : codec.entityKey(entityKey(e.alias)),
    })),
    encrypted: true,
  };
}

/**
 * The bank's free text: name, mission and every string of its config but `encryption` (which
 * the database reads to know the bank's form): missions and custom instructions, and any text
 * setting added later.
 */
type BankText = { name?: string | null; mission?: string | null; config?: Record<string, unknown> };

export const isConfigText = (k: string, v: unknown): v is string =>
  k !== 'encryption' && typeof v === 'string';

/** The stored form of a bank's free text: sealed with the codec, else plain (escaped). */
export function bankTextForm<T extends BankText>(codec: BankCodec | null, b: T): T {
  const form = (v: string) => (codec ? codec.seal(v, 'bank') : storePlain(v));
  const out: T = { ...b };
  if (typeof b.name === 'string') out.name = form(b.name);
  if (typeof b.mission === 'string') out.mission = form(b.mission);
  if (b.config) {
    out.config = Object.fromEntries(
      Object.entries(b.config).map(([k, v]) => [k, isConfigText(k, v) ? form(v) : v]),
    );
  }
  return out;
}

/** Whether any of the bank's free text is sealed. */
export function bankTextSealed(b: BankText): boolean {
  return (
    (typeof b.name === 'string' && isSealed(b.name)) ||
    (typeof b.mission === 'string' && isSealed(b.mission)) ||
    Object.entries(b.config ?? {}).some(([k, v]) => isConfigText(k, v) && isSealed(v))
  );
}

/** A bank with no sealed text: its values unescaped. */
function openPlainBank<T extends BankText>(b: T): T {
  const out: T = { ...b };
  if (typeof b.name === 'string') out.name = plainText(b.name);
  if (typeof b.mission === 'string') out.mission = plainText(b.mission);
  if (b.config) {
    out.config = Object.fromEntries(
      Object.entries(b.config).map(([k, v]) => [k, isConfigText(k, v) ? plainText(v) : v]),
    );
  }
  return out;
}

/** Cosine similarity (as pgvector's `1 - (a <=> b)`). */
function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

/** The stored form of a directive's name and text (the ones given). */
function directiveForm(
  codec: BankCodec | null,
  d: { name?: string; text?: string },
): { name?: string; text?: string } {
  const form = (v: string) => (codec ? codec.seal(v, 'directive') : storePlain(v));
  return {
    ...(d.name === undefined ? {} : { name: form(d.name) }),
    ...(d.text === undefined ? {} : { text: form(d.text) }),
  };
}

/** The stored form of a memory for a plain bank: plaintext, escaped where it could look sealed. */
export function plainMemory(m: NewMemory): NewMemory {
  return {
    ...m,
    text: storePlain(m.text),
    context: m.context === null ? null : storePlain(m.context),
    metadata: storePlainMetadata(m.metadata),
    entities: m.entities.map((e) => ({ ...e, text: storePlain(e.text) })),
    encrypted: false,
  };
}

/**
 * Sealed metadata: the original (with the memory's plaintext terms, so a later decryption can
 * restore its keyword index exactly) encrypted in one member, plus the conversation id as a
 * keyed hash, so Retain can still find the memories of a session.
 */
export function sealMetadata(
  codec: BankCodec,
  metadata: Record<string, unknown>,
  terms: [string, number][],
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    [SEALED_MEMBER]: codec.seal(
      JSON.stringify({ m: metadata, t: terms } satisfies SealedMetadata),
      'metadata',
    ),
  };
  for (const key of SESSION_KEYS) {
    const v = metadata[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      out[key] = codec.session(String(v));
    break;
  }
  return out;
}

/** Opens stored metadata: the original and, when it was sealed, the memory's plaintext terms. */
export function openMetadata(
  codec: BankCodec | null,
  stored: Record<string, unknown>,
  bankId: string,
): SealedMetadata {
  const sealed = sealedMetadata(stored);
  if (sealed === null) return { m: plainMetadata(stored) };
  if (!codec) throw missingKey(bankId);
  return JSON.parse(codec.open(sealed, 'metadata')) as SealedMetadata;
}

/**
 * Opens values of one bank, fetching (and unwrapping) its data key only when a sealed value
 * is met: plain banks pay nothing. A sealed value that does not open is an error, never
 * returned as it is.
 */
class Opener {
  #codec: Promise<BankCodec | null> | null = null;
  constructor(
    private readonly inner: Store,
    private readonly keyring: Keyring | null,
    private readonly projectId: string,
    private readonly bankId: string,
  ) {}

  #state: ReturnType<Store['bankEncryption']> | null = null;

  state(): ReturnType<Store['bankEncryption']> {
    this.#state ??= this.inner.bankEncryption(this.projectId, this.bankId);
    return this.#state;
  }

  /** The state read by another statement of the same snapshot, unless it was read already. */
  known(state: Awaited<ReturnType<Store['bankEncryption']>>): void {
    this.#state ??= Promise.resolve(state);
  }

  /**
   * Whether the bank is known plain already (its state read, no key): then opening its memories
   * reads nothing more.
   */
  async knownPlain(): Promise<boolean> {
    return this.#state !== null && !(await this.#state)?.key;
  }

  codec(): Promise<BankCodec | null> {
    this.#codec ??= this.state().then((st) => {
      if (!st?.key) return null;
      if (!this.keyring) throw missingKey(this.bankId);
      return this.keyring.codec(this.projectId, this.bankId, st.key);
    });
    return this.#codec;
  }

  /**
   * Where the bank's vectors are searched: in memory when its config wants encryption or a
   * conversion is under way (some vectors are sealed); null for SQL (all plain).
   */
  async vectorTarget(): Promise<{
    projectId: string;
    bankId: string;
    codec: BankCodec | null;
    keyId: string;
  } | null> {
    const st = await this.state();
    if (!st?.key || (st.target !== 'managed' && !st.key.converting)) return null;
    return {
      projectId: this.projectId,
      bankId: this.bankId,
      codec: await this.codec(),
      keyId: st.key.wrapped,
    };
  }

  async value(v: string, field: Field): Promise<string> {
    if (!isSealed(v)) return plainText(v);
    const codec = await this.codec();
    if (!codec)
      throw new AppError('internal', `bank '${this.bankId}' holds encrypted data but has no data key`);
    return codec.open(v, field);
  }

  async metadata(m: Record<string, unknown>): Promise<Record<string, unknown>> {
    return sealedMetadata(m) === null ? plainMetadata(m) : openMetadata(await this.codec(), m, this.bankId).m;
  }

  /**
   * The memory opened when nothing of it is sealed (every memory of a plain bank), else null:
   * without a promise, so that a Recall's hundred candidates need none each.
   */
  plainMemory<T extends Memory>(m: T): T | null {
    if (
      m.entities.some(isSealed) ||
      isSealed(m.text) ||
      (m.context !== null && isSealed(m.context)) ||
      (m.invalidation_reason !== null && isSealed(m.invalidation_reason)) ||
      sealedMetadata(m.metadata) !== null
    )
      return null;
    return {
      ...m,
      text: plainText(m.text),
      context: m.context === null ? null : plainText(m.context),
      invalidation_reason: m.invalidation_reason === null ? null : plainText(m.invalidation_reason),
      metadata: plainMetadata(m.metadata),
      entities: m.entities.map(plainText),
    };
  }

  async memory<T extends Memory>(m: T): Promise<T> {
    const plain = this.plainMemory(m);
    if (plain) return plain;
    // The store orders entity names as stored: sealed ones need ordering again once opened.
    const sealed = m.entities.some(isSealed);
    const entities = await Promise.all(m.entities.map((e) => this.value(e, 'entity')));
    return {
      ...m,
      text: await this.value(m.text, 'text'),
      context: m.context === null ? null : await this.value(m.context, 'context'),
      invalidation_reason:
        m.invalidation_reason === null ? null : await this.value(m.invalidation_reason, 'context'),
      metadata: await this.metadata(m.metadata),
      entities: sealed ? entities.sort() : entities,
    };
  }

  /** A bank with its name, mission and config text opened. */
  async bank<T extends BankText>(b: T): Promise<T> {
    const open = (v: string) => this.value(v, 'bank');
    const out: T = { ...b };
    if (typeof b.name === 'string') out.name = await open(b.name);
    if (typeof b.mission === 'string') out.mission = await open(b.mission);
    if (b.config) {
      const config: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(b.config)) config[k] = isConfigText(k, v) ? await open(v) : v;
      out.config = config;
    }
    return out;
  }

  async directive<T extends Directive>(d: T): Promise<T> {
    return { ...d, name: await this.value(d.name, 'directive'), text: await this.value(d.text, 'directive') };
  }

  /**
   * An entity: its name and sealed aliases opened; aliases known only as keyed hashes are shown
   * when `known` names their words.
   */
  async entity<T extends Entity>(e: T, known: Map<string, string> = new Map()): Promise<T> {
    const aliases = new Set<string>();
    for (const a of e.aliases) {
      if (isSealed(a)) aliases.add(await this.value(a, 'entity'));
      else if (!HASHED.test(a)) aliases.add(plainText(a));
      else {
        const words = a.split(' ').map((w) => known.get(w));
        if (words.every((w) => w !== undefined)) aliases.add(words.join(' '));
      }
    }
    return { ...e, name: await this.value(e.name, 'entity'), aliases: [...aliases] };
  }
}

/**
 * The store of managed encryption: wraps any store so that an encrypted bank's memory text,
 * context, metadata, entity names, directives, evaluation runs' cases, mental models and queued Retain payloads
 * reach the database only sealed (AES-256-GCM under the bank's data key), keyword terms, entity
 * keys and conversation ids only as keyed hashes, and every reader gets plaintext back. Plain banks pass through (escaped, so
 * no plaintext can pass for a ciphertext). Every method not named here is the inner store's.
 */
export function encryptingStore(
  inner: Store,
  keyring: Keyring | null,
  hooks: EncryptionHooks,
  opts: { snapshot?: boolean; vectors?: VectorCache; keyed?: RecentKeys } = {},
): Store {
  const vectors = opts.vectors ?? new VectorCache(DEFAULT_VECTOR_CACHE_MB * 2 ** 20);
  // Banks seen with a data key: their channels wait for the snapshot's state (terms are hashed).
  const keyed = opts.keyed ?? new RecentKeys(KEYED_BANKS);
  // Inside a read-only snapshot a bank's key cannot change under the reader: one lookup per
  // bank serves every read of it (a Recall reads each bank three times).
  const openers = opts.snapshot ? new Map<string, Opener>() : null;
  const opener = (projectId: string, bankId: string) => {
    if (!openers) return new Opener(inner, keyring, projectId, bankId);
    const key = `${projectId}\u0000${bankId}`;
    let o = openers.get(key);
    if (!o) {
      o = new Opener(inner, keyring, projectId, bankId);
      openers.set(key, o);
    }
    return o;
  };

  /** The bank's data key when it has one (any state), with its codec. */
  async function searchCodec(projectId: string, bankId: string): Promise<BankCodec | null> {
    return opener(projectId, bankId).codec();
  }

  /** The codec new rows of the bank are sealed with, or null when its config wants plain rows. */
  async function writeCodec(projectId: string, bankId: string): Promise<BankCodec | null> {
    const st = await inner.bankEncryption(projectId, bankId);
    if (!st || st.target === 'none') return null;
    if (!keyring) throw missingKey(bankId);
    const key: BankKeyRecord =
      st.key ?? (await inner.createBankKey(projectId, bankId, keyring.create(projectId, bankId), false));
    return keyring.codec(projectId, bankId, key);
  }

  const stored = (codec: BankCodec | null, m: NewMemory) => (codec ? sealMemory(codec, m) : plainMemory(m));

  /**
   * After a write made outside the bank lock (directives, observations): if the bank's setting
   * flipped since the form was chosen, the conversion picks the row up.
   */
  async function recheck(projectId: string, bankId: string, codec: BankCodec | null): Promise<void> {
    const st = await inner.bankEncryption(projectId, bankId);
    if (st && (st.target === 'managed') !== (codec !== null)) await hooks.onSwitch(projectId, bankId);
  }

  /** A queued operation's payload as it was given: opened when it was sealed. */
  async function openPayload(projectId: string, bankId: string, payload: unknown): Promise<unknown> {
    const sealed = sealedMetadata(payload as Record<string, unknown>);
    if (!sealed) return payload;
    const codec = await opener(projectId, bankId).codec();
    if (!codec) throw missingKey(bankId);
    return JSON.parse(codec.open(sealed, 'payload'));
  }

  /** `q` of a listing, in a bank with a data key: whole keyword terms, plain or hashed. */
  function termGroups(codec: BankCodec, q: string): string[][] {
    const groups = [...new Set(keywordTerms(q))].map((t) => [t, codec.term(t)]);
    return groups.length ? groups : [['']];
  }

  const store: Store = {
    ...inner,
    ...webhookSealing(inner, keyring, {
      writeCodec,
      open: (projectId, bankId, v, field) => opener(projectId, bankId).value(v, field),
    }),

    async forget(projectId, bankId, subject, draft) {
      const undone = draft.undone;
      if (undone) {
        // The bank's sealed payloads are opened with its key, read before the deletion's
        // transaction (which deletes it); without the key, a payload is read as empty.
        const codec = await searchCodec(projectId, bankId);
        draft = {
          ...draft,
          undone: (kind, payload, progress) => {
            const sealed = sealedMetadata(payload as Record<string, unknown>);
            const opened = !sealed ? payload : codec ? JSON.parse(codec.open(sealed, 'payload')) : null;
            return undone(kind, opened, progress);
          },
        };
      }
      const done = await inner.forget(projectId, bankId, subject, draft);
      // What this process holds of it in the clear goes at once: decrypted vectors (zeroed) and,
      // with the bank, its unwrapped data key. Other processes reload from the database, where
      // it no longer is, on their next use of the bank.
      if (done) {
        vectors.forget(projectId, bankId, subject.kind === 'bank' ? null : done.memoryIds);
        if (subject.kind === 'bank') keyring?.forget(projectId, bankId);
      }
      return done;
    },

    async insertMemories(projectId, bankId, memories, opts) {
      for (let attempt = 0; ; attempt++) {
        const codec = await writeCodec(projectId, bankId);
        try {
          // A document's content hash sealed: a bare hash would confirm a guess at its content.
          // Its kept source sealed like memory text (escaped in a plain bank, like any plaintext).
          const documents = opts?.documents?.map((d) => ({
            ...d,
            contentHash: codec && d.contentHash ? codec.seal(d.contentHash, 'document') : d.contentHash,
            ...(typeof d.source === 'string'
              ? { source: codec ? codec.seal(d.source, 'source') : storePlain(d.source) }
              : {}),
          }));
          return await inner.insertMemories(
            projectId,
            bankId,
            memories.map((m) => stored(codec, m)),
            opts && { ...opts, documents },
          );
        } catch (err) {
          const changed = err instanceof AppError && err.extra?.reason === ENCRYPTION_CHANGED;
          if (!changed || attempt > 0) throw err;
        }
      }
    },

    async curateMemory(projectId, bankId, id, change) {
      for (let attempt = 0; ; attempt++) {
        const codec = await writeCodec(projectId, bankId);
        // The reason is the client's text: sealed like a memory's context.
        const form = (v: string) => (codec ? codec.seal(v, 'context') : storePlain(v));
        const reason =
          change.reason === undefined || change.reason === null ? change.reason : form(change.reason);
        const content = change.content && { ...change.content, memory: stored(codec, change.content.memory) };
        try {
          const done = await inner.curateMemory(projectId, bankId, id, { ...change, reason, content });
          // Its vector and the observations' went: decrypted copies in this process go too.
          if (done.done && (content || change.state === 'invalidated'))
            vectors.forget(projectId, bankId, [id]);
          return done;
        } catch (err) {
          const changed = err instanceof AppError && err.extra?.reason === ENCRYPTION_CHANGED;
          if (!changed || attempt > 0) throw err;
        }
      }
    },

    async saveObservation(projectId, bankId, change, cursor, opts) {
      const codec = change?.memory ? await writeCodec(projectId, bankId) : null;
      const sealed = change?.memory ? { ...change, memory: stored(codec, change.memory) } : change;
      const saved = await inner.saveObservation(projectId, bankId, sealed, cursor, opts);
      if (saved && change?.memory) await recheck(projectId, bankId, codec);
      return saved;
    },

    async listMemories(projectId, bankId, filter, page) {
      const o = opener(projectId, bankId);
      const codec = filter.q ? await o.codec() : null;
      const f = codec && filter.q ? { ...filter, q: undefined, qTerms: termGroups(codec, filter.q) } : filter;
      const result = await inner.listMemories(projectId, bankId, f, page);
      return { ...result, items: await Promise.all(result.items.map((m) => o.memory(m))) };
    },

    async countMemories(projectId, bankId, filter, pay) {
      const codec = filter.q ? await searchCodec(projectId, bankId) : null;
      const f = codec && filter.q ? { ...filter, q: undefined, qTerms: termGroups(codec, filter.q) } : filter;
      return inner.countMemories(projectId, bankId, f, pay);
    },

    async getMemories(projectId, bankId, ids) {
      const o = opener(projectId, bankId);
      return Promise.all((await inner.getMemories(projectId, bankId, ids)).map((m) => o.memory(m)));
    },

    async getCandidates(projectId, bankId, ids, vector, opts) {
      const o = opener(projectId, bankId);
      // The snapshot may end with the candidates only when nothing is read after them: a bank
      // known plain (an encrypted one may read sealed vectors and its key next).
      const last = opts?.endsSnapshot && (await o.knownPlain());
      const rows = await inner.getCandidates(projectId, bankId, ids, vector, { endsSnapshot: last });
      // Sealed vectors have no similarity in SQL: opened here, for these few memories.
      const sealed = rows.filter((r) => r.similarity === null).map((r) => r.id);
      const sims = new Map<string, number>();
      if (sealed.length && (await o.vectorTarget())) {
        const codec = await o.codec();
        for (const r of await inner.memoryVectors(projectId, bankId, { ids: sealed })) {
          const v = openStoredVector(codec, r);
          if (v && v.length === vector.length) sims.set(r.id, cosine(v, vector));
        }
      }
      const similarity = (m: (typeof rows)[number]) => m.similarity ?? sims.get(m.id) ?? null;
      // Plain candidates (every one of a plain bank) are opened without a promise each; the copy
      // opening makes carries the row's similarity, set here to the one found.
      const plain = rows.map((m) => {
        const p = o.plainMemory(m);
        if (p) p.similarity = similarity(m);
        return p;
      });
      if (plain.every((p) => p !== null)) return plain;
      return Promise.all(
        rows.map(async (m, i) => plain[i] ?? { ...(await o.memory(m)), similarity: similarity(m) }),
      );
    },

    async getCandidatesAt(projectId, bankId, ids, vector, version) {
      // A bank seen with a data key reads its candidates where it can read its key and vectors too.
      if (keyed.has(`${projectId}\u0000${bankId}`)) return null;
      const rows = await inner.getCandidatesAt(projectId, bankId, ids, vector, version);
      if (!rows) return null;
      const o = opener(projectId, bankId);
      const plain = rows.map((m) => o.plainMemory(m));
      // Anything sealed: opening it would read the bank's key after the snapshot ended.
      return plain.every((p) => p !== null) ? plain : null;
    },

    async consolidationSources(projectId, bankId, afterSeq, limit, opts) {
      const o = opener(projectId, bankId);
      const rows = await inner.consolidationSources(projectId, bankId, afterSeq, limit, opts);
      const sealed = rows.filter((r) => r.embedding.length === 0).map((r) => r.id);
      const opened = new Map<string, Float32Array>();
      if (sealed.length && (await o.vectorTarget())) {
        const codec = await o.codec();
        for (const r of await inner.memoryVectors(projectId, bankId, { ids: sealed })) {
          const v = openStoredVector(codec, r);
          if (v) opened.set(r.id, v);
        }
      }
      return Promise.all(
        rows.map(async (m) => ({ ...(await o.memory(m)), embedding: opened.get(m.id) ?? m.embedding })),
      );
    },

    async semanticSearch(projectId, bankId, vector, filter, limit) {
      const target = await opener(projectId, bankId).vectorTarget();
      if (!target) return inner.semanticSearch(projectId, bankId, vector, filter, limit);
      return vectors.search(inner, target, vector, filter, limit);
    },

    async consolidationCandidates(projectId, bankId, vector, o) {
      const target = await opener(projectId, bankId).vectorTarget();
      if (!target) return inner.consolidationCandidates(projectId, bankId, vector, o);
      return vectors.consolidationCandidates(inner, target, vector, o);
    },

    async setEmbeddings(projectId, bankId, rows) {
      for (let attempt = 0; ; attempt++) {
        const codec = await writeCodec(projectId, bankId);
        const form = codec
          ? rows.map((r) => ({
              id: r.id,
              embedding: null,
              embedding_sealed: r.embedding?.length ? codec.sealVector(r.id, r.embedding) : null,
            }))
          : rows.map((r) => ({ id: r.id, embedding: r.embedding, embedding_sealed: null }));
        try {
          return await inner.setEmbeddings(projectId, bankId, form, { encrypted: codec !== null });
        } catch (err) {
          const changed = err instanceof AppError && err.extra?.reason === ENCRYPTION_CHANGED;
          if (!changed || attempt > 0) throw err;
        }
      }
    },

    async keywordSearch(projectId, bankId, terms, filter, limit) {
      const codec = await searchCodec(projectId, bankId);
      // Plain and hashed forms together: during a conversion the bank holds both.
      const all = codec ? [...terms, ...terms.map((t) => codec.term(t))] : terms;
      return inner.keywordSearch(projectId, bankId, all, filter, limit);
    },

    async searchChannels(projectId, bankId, q, filter, limit) {
      // In a snapshot, the bank's state comes with the vector walk's set-up: one statement, and
      // the channels with it when the bank is thought plain (searched again if it has a key).
      const key = `${projectId}\u0000${bankId}`;
      const speculate = openers && q.expectedSize !== undefined && !keyed.has(key);
      const { opened, hits: guessed } = speculate
        ? await inner.openSearchChannels(projectId, bankId, q, filter, limit, q.expectedSize!)
        : {
            opened: openers
              ? await inner.openBankSearch(projectId, bankId, q.vector?.length ?? 0, limit)
              : undefined,
            hits: null,
          };
      if (opened) opener(projectId, bankId).known(opened.encryption);
      if (guessed && !opened?.encryption?.key) return guessed;
      if (opened?.encryption?.key) keyed.add(key);
      const codec = await searchCodec(projectId, bankId);
      const terms = codec ? [...q.terms, ...q.terms.map((t) => codec.term(t))] : q.terms;
      const graph =
        codec && q.graph
          ? {
              ...q.graph,
              probes: [...q.graph.probes, ...q.graph.probes.map((p) => codec.entityKey(entityKey(p)))],
            }
          : q.graph;
      // Sealed vectors are searched outside SQL (as `semanticSearch` does), the rest in one statement.
      const target = q.vector ? await opener(projectId, bankId).vectorTarget() : null;
      const hits = await inner.searchChannels(
        projectId,
        bankId,
        { ...q, terms, graph, vector: target ? null : q.vector },
        filter,
        limit,
        opened,
      );
      if (target && q.vector) hits.semantic = await vectors.search(inner, target, q.vector, filter, limit);
      return hits;
    },

    async lastSearchChannels(projectId, bankId, q, filter, limit) {
      // Hits only for a bank without a data key: one with a key is found so by `searchChannels`.
      if (!openers || keyed.has(`${projectId}\u0000${bankId}`)) return null;
      return inner.lastSearchChannels(projectId, bankId, q, filter, limit);
    },

    async graphSearch(projectId, bankId, probes, filter, limit, depth) {
      const codec = await searchCodec(projectId, bankId);
      const all = codec ? [...probes, ...probes.map((p) => codec.entityKey(entityKey(p)))] : probes;
      return inner.graphSearch(projectId, bankId, all, filter, limit, depth);
    },

    async findEntities(projectId, bankId, keys, words) {
      const o = opener(projectId, bankId);
      const codec = await o.codec();
      if (!codec)
        return Promise.all(
          (await inner.findEntities(projectId, bankId, keys, words)).map((e) => o.entity(e)),
        );
      const known = new Map<string, string>();
      for (const w of new Set([...words, ...keys.flatMap((k) => k.split(' '))]))
        known.set(codec.entityKey(w), w);
      const found = await inner.findEntities(
        projectId,
        bankId,
        [...keys, ...keys.map((k) => codec.entityKey(k))],
        [...words, ...words.map((w) => codec.entityKey(w))],
      );
      return Promise.all(found.map((e) => o.entity(e, known)));
    },

    async getEntities(projectId, bankId, ids) {
      const o = opener(projectId, bankId);
      return Promise.all((await inner.getEntities(projectId, bankId, ids)).map((e) => o.entity(e)));
    },

    async listEntities(projectId, bankId, page) {
      const o = opener(projectId, bankId);
      const result = await inner.listEntities(projectId, bankId, page);
      return { ...result, items: await Promise.all(result.items.map((e) => o.entity(e))) };
    },

    async latestInSession(projectId, bankId, session, limit) {
      const o = opener(projectId, bankId);
      const codec = await o.codec();
      const rows = codec
        ? [
            ...(await inner.latestInSession(projectId, bankId, codec.session(session), limit)),
            ...(await inner.latestInSession(projectId, bankId, session, limit)),
          ].slice(0, limit)
        : await inner.latestInSession(projectId, bankId, session, limit);
      return Promise.all(
        rows.map(async (r) => ({
          text: await o.value(r.text, 'text'),
          context: r.context === null ? null : await o.value(r.context, 'context'),
        })),
      );
    },

    async insertOperation(o) {
      const codec = await writeCodec(o.projectId, o.bankId);
      const payload = codec
        ? { [SEALED_MEMBER]: codec.seal(JSON.stringify(o.payload), 'payload') }
        : o.payload;
      return inner.insertOperation({ ...o, payload });
    },

    async claimOperation(workerId, leaseMs, opts) {
      const claimed = await inner.claimOperation(workerId, leaseMs, opts);
      if (!claimed || claimed.payload === undefined) return claimed;
      return {
        ...claimed,
        payload: await openPayload(claimed.projectId, claimed.operation.bank_id, claimed.payload),
      };
    },

    async operationPayload(projectId, bankId, id) {
      const found = await inner.operationPayload(projectId, bankId, id);
      return found && { ...found, payload: await openPayload(projectId, bankId, found.payload) };
    },

    async documentHashes(projectId, bankId, ids) {
      const o = opener(projectId, bankId);
      const stored = await inner.documentHashes(projectId, bankId, ids);
      return new Map(
        await Promise.all([...stored].map(async ([id, h]) => [id, await o.value(h, 'document')] as const)),
      );
    },

    async listDocuments(projectId, bankId, page) {
      const o = opener(projectId, bankId);
      const r = await inner.listDocuments(projectId, bankId, page);
      return {
        ...r,
        items: await Promise.all(
          r.items.map(async (d) => ({ ...d, content_hash: await o.value(d.content_hash, 'document') })),
        ),
      };
    },

    async documentSource(projectId, bankId, id) {
      const d = await inner.documentSource(projectId, bankId, id);
      if (d?.source == null) return d;
      return { source: await opener(projectId, bankId).value(d.source, 'source') };
    },

    async getDocument(projectId, bankId, id) {
      const d = await inner.getDocument(projectId, bankId, id);
      return d && { ...d, content_hash: await opener(projectId, bankId).value(d.content_hash, 'document') };
    },

    async getBank(projectId, bankId) {
      const b = await inner.getBank(projectId, bankId);
      return b && opener(projectId, bankId).bank(b);
    },

    async ensureBank(projectId, bankId, init) {
      return opener(projectId, bankId).bank(await inner.ensureBank(projectId, bankId, init));
    },

    async listBanks(projectId, filter, page) {
      const banks = await inner.listBanks(projectId, filter, page);
      return Promise.all(
        banks.map((b) => (bankTextSealed(b) ? opener(projectId, b.id).bank(b) : openPlainBank(b))),
      );
    },

    async updateBank(projectId, bankId, patch) {
      // Name and mission go in the form the bank wants now; a bank being switched on gets them
      // sealed by the conversion its switch queued.
      const codec =
        patch.name !== undefined || patch.mission !== undefined ? await writeCodec(projectId, bankId) : null;
      const updated = await inner.updateBank(projectId, bankId, bankTextForm(codec, patch));
      if (!updated) return null;
      if (patch.name !== undefined || patch.mission !== undefined) await recheck(projectId, bankId, codec);
      return opener(projectId, bankId).bank(updated);
    },

    async updateBankConfig(projectId, bankId, changes) {
      if (changes.encryption === 'managed' && !keyring) {
        throw new AppError(
          'master_key_missing',
          'encryption "managed" needs the server master key (MNEMO_MASTER_KEY)',
        );
      }
      // Text settings go in the form the bank has now; a switch in this same update converts them
      // with the rest of the bank, and `recheck` catches a switch made meanwhile by someone else.
      const text = Object.entries(changes).some(([k, v]) => isConfigText(k, v));
      const codec = text ? await writeCodec(projectId, bankId) : null;
      const updated = await inner.updateBankConfig(
        projectId,
        bankId,
        bankTextForm(codec, { config: changes }).config!,
      );
      if (!updated) return updated;
      if (text) await recheck(projectId, bankId, codec);
      // The transition is the one this writer made under the row lock (`before` is the config it
      // changed), not a read from before the write that a concurrent writer may have outdated.
      const was = updated.before.encryption === 'managed';
      const wanted = updated.bank.config.encryption === 'managed';
      const now = await inner.bankEncryption(projectId, bankId);
      const opened = { ...updated, bank: await opener(projectId, bankId).bank(updated.bank) };
      if (!now || (wanted === was && !(wanted && !now.key))) return opened;
      let key = now.key;
      if (wanted && !key)
        key = await inner.createBankKey(projectId, bankId, keyring!.create(projectId, bankId), true);
      // A key a concurrent writer created lazily (not converting) still has rows to convert.
      if (key && !key.converting) await inner.setBankKeyConverting(projectId, bankId, true);
      // A bank that never had a key and stays plain has nothing to convert.
      if (!key) return opened;
      // Kept Idempotency-Key answers were made in the old form: none survives the switch.
      await inner.deleteIdempotentResponses(projectId, bankId);
      await hooks.onSwitch(projectId, bankId);
      return opened;
    },

    async insertDirective(projectId, bankId, d, max) {
      const codec = await writeCodec(projectId, bankId);
      const written = await inner.insertDirective(
        projectId,
        bankId,
        { ...d, ...directiveForm(codec, d) },
        max,
      );
      if (!written) return null;
      await recheck(projectId, bankId, codec);
      return opener(projectId, bankId).directive(written);
    },

    async updateDirective(projectId, bankId, id, patch) {
      const codec = await writeCodec(projectId, bankId);
      const sealed = { ...patch, ...directiveForm(codec, patch) };
      const written = await inner.updateDirective(projectId, bankId, id, sealed);
      await recheck(projectId, bankId, codec);
      return written && opener(projectId, bankId).directive(written);
    },

    async applyBankTemplate(projectId, bankId, change, max, maxMentalModels) {
      // Mission, config text, directives and mental models go in the form the bank has now, as
      // each alone would.
      const codec = await writeCodec(projectId, bankId);
      const sealed = bankTextForm(codec, { mission: change.mission, config: change.config });
      const result = await inner.applyBankTemplate(
        projectId,
        bankId,
        {
          config: sealed.config ?? {},
          ...(change.mission !== undefined && { mission: sealed.mission ?? null }),
          createDirectives: change.createDirectives.map((d) => ({ ...d, ...directiveForm(codec, d) })),
          updateDirectives: change.updateDirectives.map((d) => ({ ...d, ...directiveForm(codec, d) })),
          createMentalModels: change.createMentalModels.map((m) => mentalModelForm(codec, m)),
          updateMentalModels: change.updateMentalModels.map((m) => mentalModelForm(codec, m)),
        },
        max,
        maxMentalModels,
      );
      await recheck(projectId, bankId, codec);
      return result;
    },

    async listDirectives(projectId, bankId) {
      const o = opener(projectId, bankId);
      return Promise.all((await inner.listDirectives(projectId, bankId)).map((d) => o.directive(d)));
    },

    async getDirective(projectId, bankId, id) {
      const d = await inner.getDirective(projectId, bankId, id);
      return d && opener(projectId, bankId).directive(d);
    },

    async insertEvaluation(projectId, bankId, e, keep) {
      const codec = await writeCodec(projectId, bankId);
      const cases = codec ? codec.seal(e.cases, 'evaluation') : storePlain(e.cases);
      const written = await inner.insertEvaluation(projectId, bankId, { ...e, cases }, keep);
      if (!written) return null;
      await recheck(projectId, bankId, codec);
      return { ...written, cases: e.cases };
    },

    async saveArchive(projectId, bankId, a) {
      for (let attempt = 0; ; attempt++) {
        const codec = await writeCodec(projectId, bankId);
        const data = codec ? codec.sealBytes(a.data, 'archive') : a.data;
        try {
          return await inner.saveArchive(projectId, bankId, { ...a, data, sealed: codec !== null });
        } catch (err) {
          const changed = err instanceof AppError && err.extra?.reason === ENCRYPTION_CHANGED;
          if (!changed || attempt > 0) throw err;
        }
      }
    },

    async getArchive(projectId, bankId, key, now) {
      const a = await inner.getArchive(projectId, bankId, key, now);
      if (!a?.sealed) return a;
      const codec = await opener(projectId, bankId).codec();
      if (!codec) throw missingKey(bankId);
      return { ...a, data: codec.openBytes(a.data, 'archive'), sealed: false };
    },

    async getEvaluation(projectId, bankId, id) {
      const e = await inner.getEvaluation(projectId, bankId, id);
      return e && { ...e, cases: await opener(projectId, bankId).value(e.cases, 'evaluation') };
    },

    async claimIdempotencyKey(scope, requestHash, staleMs) {
      const claim = await inner.claimIdempotencyKey(scope, requestHash, staleMs);
      if (claim.state !== 'done' || !claim.encrypted) return claim;
      const codec = claim.bankId === null ? null : await searchCodec(scope.projectId, claim.bankId);
      if (!codec || typeof claim.response !== 'string')
        throw new AppError('internal', 'a kept encrypted answer has no data key to open it');
      return { ...claim, response: JSON.parse(codec.open(claim.response, 'reply')), encrypted: false };
    },

    /**
     * The answer of a request on an encrypted bank is kept sealed with the bank's data key. If the
     * bank's setting switched (or the bank went) while it was being kept, it is dropped: the
     * switch drops the bank's answers, and this one may have been written in the old form after.
     */
    async saveIdempotentResponse(scope, reply) {
      if (reply.bankId === null || reply.withheld) return inner.saveIdempotentResponse(scope, reply);
      const sealed = (st: Awaited<ReturnType<Store['bankEncryption']>>) =>
        st !== null && (st.target === 'managed' || st.key !== null);
      const before = await inner.bankEncryption(scope.projectId, reply.bankId);
      // Managed, but with no data key yet: keep nothing rather than plaintext.
      if (sealed(before) && !before?.key) return inner.releaseIdempotencyKey(scope);
      if (sealed(before) && !keyring) throw missingKey(reply.bankId);
      const codec = before?.key && keyring ? keyring.codec(scope.projectId, reply.bankId, before.key) : null;
      await inner.saveIdempotentResponse(
        scope,
        codec
          ? { ...reply, response: codec.seal(JSON.stringify(reply.response), 'reply'), encrypted: true }
          : { ...reply, encrypted: false },
      );
      const after = await inner.bankEncryption(scope.projectId, reply.bankId);
      if (sealed(after) !== sealed(before) || (before !== null && after === null))
        await inner.deleteIdempotentResponses(scope.projectId, reply.bankId);
    },

    ...sealedMentalModels(inner, { writeCodec, opener, recheck }),

    readSnapshot: (fn) =>
      inner.readSnapshot((snapshot) =>
        fn(encryptingStore(snapshot, keyring, hooks, { snapshot: true, vectors, keyed })),
      ),
  };
  return store;
}
