import { createHash } from 'node:crypto';
import { termFrequencies } from '../../text/terms.js';
import type {
  BankKeyStore,
  ConversionStore,
  ConvertedEntity,
  ConvertedMemory,
  EvaluationStore,
  MentalModelStore,
  StoredMemoryFields,
} from '../../store/store.js';
import { AppError } from '../errors.js';
import { type OperationRunner, sliceDeadline } from '../operations.js';
import type { Deps } from '../services.js';
import { entityKey } from '../retain/entities.js';
import {
  type BankCodec,
  isSealed,
  plainMetadata,
  plainText,
  SEALED_MEMBER,
  sealedMetadata,
  storePlain,
  storePlainMetadata,
} from './codec.js';
import { bankTextForm, isConfigText, openMetadata, sealMetadata } from './encrypting-store.js';

/**
 * Rows per transaction: small enough that writers of the bank wait only briefly for the lock,
 * and that one batch holds the embedded engine (and the event loop with it) only briefly.
 */
const BATCH = 50;
/** Conversion rounds before giving up (the setting kept flipping); the worker retries later. */
const MAX_ROUNDS = 20;

const contentHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

const parseVector = (text: string) => Float32Array.from(JSON.parse(text) as number[]);
const vectorText = (v: Float32Array) => `[${Array.from(v).join(',')}]`;

/** The memory's vector in the wanted form: sealed (the plain column emptied) or plain. */
function convertVector(
  codec: BankCodec,
  r: StoredMemoryFields,
  toEncrypted: boolean,
): Pick<ConvertedMemory, 'embedding' | 'embedding_sealed'> {
  if (toEncrypted) {
    return {
      embedding: null,
      embedding_sealed:
        r.embedding_sealed ?? (r.embedding ? codec.sealVector(r.id, parseVector(r.embedding)) : null),
    };
  }
  return {
    embedding:
      r.embedding ?? (r.embedding_sealed ? vectorText(codec.openVector(r.id, r.embedding_sealed)) : null),
    embedding_sealed: null,
  };
}

/**
 * One memory to the wanted form: text, terms and hashes when the row is in the other form,
 * and its vector. A row whose text is in the wanted form already (an encrypted bank from before
 * vectors were sealed) has only its vector converted.
 */
export function convertMemory(
  codec: BankCodec,
  r: StoredMemoryFields,
  toEncrypted: boolean,
): ConvertedMemory {
  if (r.encrypted === toEncrypted) {
    return {
      id: r.id,
      text: r.text,
      context: r.context,
      metadata: r.metadata,
      content_hash: r.content_hash,
      terms: r.terms,
      encrypted: r.encrypted,
      ...convertVector(codec, r, toEncrypted),
    };
  }
  const m = toEncrypted ? encryptMemory(codec, r) : decryptMemory(codec, r);
  return { ...m, ...convertVector(codec, r, toEncrypted) };
}

/**
 * One memory (a row in plain form: its terms and content hash are plaintext) to its encrypted
 * form. Values are opened first, so even a stray sealed value is never sealed twice.
 */
export function encryptMemory(codec: BankCodec, r: StoredMemoryFields): ConvertedMemory {
  const text = codec.open(r.text, 'text');
  const opened = openMetadata(codec, r.metadata, '');
  return {
    id: r.id,
    text: codec.seal(text, 'text'),
    context: r.context === null ? null : codec.seal(codec.open(r.context, 'context'), 'context'),
    metadata: sealMetadata(
      codec,
      opened.m,
      r.terms.map((t) => [t.term, t.tf]),
    ),
    content_hash: codec.contentHash(r.content_hash),
    terms: r.terms.map((t) => ({ term: codec.term(t.term), tf: t.tf })),
    ...convertVector(codec, r, true),
    encrypted: true,
  };
}

/**
 * One memory back to plain form. Its keyword terms come back exactly from the sealed metadata;
 * for a memory without them (metadata rewritten since), the terms its own text yields are
 * recovered by hashing them and the rest (context from neighbours) is dropped.
 */
export function decryptMemory(codec: BankCodec, r: StoredMemoryFields): ConvertedMemory {
  const text = codec.open(r.text, 'text');
  const context = r.context === null ? null : codec.open(r.context, 'context');
  const opened = openMetadata(codec, r.metadata, '');
  let terms: { term: string; tf: number }[];
  if (opened.t) terms = opened.t.map(([term, tf]) => ({ term, tf }));
  else {
    const known = new Map(
      [...termFrequencies(context ? `${text}\n${context}` : text).keys()].map((t) => [codec.term(t), t]),
    );
    terms = r.terms.flatMap((t) => {
      const plain = known.get(t.term);
      return plain === undefined ? [] : [{ term: plain, tf: t.tf }];
    });
  }
  return {
    id: r.id,
    text: storePlain(text),
    context: context === null ? null : storePlain(context),
    metadata: storePlainMetadata(opened.m),
    content_hash: contentHash(text),
    terms,
    ...convertVector(codec, r, false),
    encrypted: false,
  };
}

export function encryptEntity(
  codec: BankCodec,
  e: { id: string; name: string; name_key: string; aliases: string[] },
): ConvertedEntity {
  const name = codec.open(e.name, 'entity');
  return {
    id: e.id,
    name: codec.seal(name, 'entity'),
    key: codec.entityKey(entityKey(name)),
    // Keyed hashes to match on, and sealed copies so a later decryption can restore them.
    aliases: [
      ...e.aliases.map((a) => codec.entityKey(entityKey(plainText(a)))),
      ...e.aliases.map((a) => codec.seal(plainText(a), 'entity')),
    ],
    encrypted: true,
  };
}

/**
 * Aliases the entity had when the bank was encrypted come back from their sealed copies; ones
 * learnt while it was encrypted exist only as keyed hashes and are dropped.
 */
export function decryptEntity(
  codec: BankCodec,
  e: { id: string; name: string; name_key: string; aliases: string[] },
): ConvertedEntity {
  const name = storePlain(codec.open(e.name, 'entity').trim().replace(/\s+/g, ' '));
  return {
    id: e.id,
    name,
    key: name.toLowerCase(),
    aliases: [...new Set(e.aliases.filter(isSealed).map((a) => storePlain(codec.open(a, 'entity'))))],
    encrypted: false,
  };
}

function convertPayload(codec: BankCodec, payload: unknown, toEncrypted: boolean): unknown {
  const sealed = sealedMetadata(payload as Record<string, unknown>);
  if (toEncrypted)
    return sealed ? payload : { [SEALED_MEMBER]: codec.seal(JSON.stringify(payload), 'payload') };
  return sealed
    ? JSON.parse(codec.open(sealed, 'payload'))
    : plainMetadata(payload as Record<string, unknown>);
}

/**
 * The `reencrypt` operation: moves a bank's memories (with their keyword terms and vectors),
 * entities, queued payloads, directives, documents' hashes, evaluation runs, mental models and bank text to the
 * form its config wants, a batch per transaction under the bank lock.
 * Every row is in exactly one form at any time (a per-row flag says which) and readers open
 * both, so nothing is lost or exposed mid-way; writers meanwhile write the new form. It ends
 * when, under the lock, no row is left in the old form.
 */
export const runReencryptOperation: OperationRunner<
  Deps<BankKeyStore & ConversionStore & EvaluationStore & MentalModelStore, 'keyring'>
> = async (s, op) => {
  const { projectId, bankId } = op;
  // A slice converts batches for about SLICE_MS, then the operation goes back to the queue; the
  // rows' own flags say what is left, so the progress is only the round count.
  const deadline = sliceDeadline();
  const start = (op.progress as { round?: number } | null)?.round ?? 0;
  for (let round = start; round < MAX_ROUNDS; round++) {
    const st = await s.store.bankEncryption(projectId, bankId);
    if (!st) return {};
    const toEncrypted = st.target === 'managed';
    if (!s.keyring) {
      throw new AppError(
        'unavailable',
        `bank '${bankId}' needs MNEMO_MASTER_KEY to be converted; it is not set here`,
      );
    }
    let key = st.key;
    if (!key) {
      if (!toEncrypted) return {};
      key = await s.store.createBankKey(projectId, bankId, s.keyring.create(projectId, bankId), true);
    }
    const codec = s.keyring.codec(projectId, bankId, key);
    /** Runs batches until none is left (true) or the slice is over (false). */
    const step = async (run: () => Promise<number>) => {
      for (;;) {
        op.signal.throwIfAborted();
        if ((await run()) === 0) return true;
        if (deadline.over()) return false;
      }
    };
    const more = { more: { round } };
    if (
      !(await step(() =>
        s.store.convertMemories(projectId, bankId, toEncrypted, BATCH, (rows) =>
          rows.map((r) => convertMemory(codec, r, toEncrypted)),
        ),
      ))
    )
      return more;
    if (
      !(await step(() =>
        s.store.convertEntities(projectId, bankId, toEncrypted, BATCH, (rows) =>
          rows.map((e) => (toEncrypted ? encryptEntity(codec, e) : decryptEntity(codec, e))),
        ),
      ))
    )
      return more;
    if (
      !(await step(() =>
        s.store.convertPayloads(projectId, bankId, toEncrypted, BATCH, (p) =>
          convertPayload(codec, p, toEncrypted),
        ),
      ))
    )
      return more;
    await s.store.convertDirectives(projectId, bankId, toEncrypted, (d) => {
      const name = codec.open(d.name, 'directive');
      const text = codec.open(d.text, 'directive');
      return toEncrypted
        ? { name: codec.seal(name, 'directive'), text: codec.seal(text, 'directive') }
        : { name: storePlain(name), text: storePlain(text) };
    });
    await step(() =>
      s.store.convertDocuments(projectId, bankId, toEncrypted, BATCH, (v, field) => {
        const plain = codec.open(v, field);
        // A hash is hex (never escaped); a source is text, escaped in plain form like any.
        if (toEncrypted) return codec.seal(plain, field);
        return field === 'source' ? storePlain(plain) : plain;
      }),
    );
    if (
      !(await step(() =>
        s.store.convertEvaluations(projectId, bankId, toEncrypted, BATCH, (cases) => {
          const plain = codec.open(cases, 'evaluation');
          return toEncrypted ? codec.seal(plain, 'evaluation') : storePlain(plain);
        }),
      ))
    )
      return more;
    if (
      !(await step(() =>
        s.store.convertMentalModels(projectId, bankId, toEncrypted, BATCH, (v) => {
          const plain = codec.open(v, 'mental_model');
          return toEncrypted ? codec.seal(plain, 'mental_model') : storePlain(plain);
        }),
      ))
    )
      return more;
    await s.store.convertBankText(projectId, bankId, toEncrypted, (b) => {
      const opened = {
        name: b.name === null ? null : codec.open(b.name, 'bank'),
        mission: b.mission === null ? null : codec.open(b.mission, 'bank'),
        config: Object.fromEntries(
          Object.entries(b.config).flatMap(([k, v]) =>
            isConfigText(k, v) ? [[k, codec.open(v, 'bank')]] : [],
          ),
        ),
      };
      return bankTextForm(toEncrypted ? codec : null, opened) as typeof opened;
    });
    if (await s.store.finishConversion(projectId, bankId)) return {};
  }
  throw new AppError(
    'unavailable',
    `bank '${bankId}': its encryption setting kept changing during the conversion`,
  );
};
