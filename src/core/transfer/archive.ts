/**
 * The document-transfer archive, laid out as Hindsight's (a ZIP): `manifest.json`, one
 * `documents/NNNNNN.json` per document (its facts; named by position so no document id reaches
 * an entry name) and optionally `observations.json`. mnemo adds `loose_facts.json`, the memories
 * retained without a document (Hindsight's reader ignores the entry), and `entity_types` on a
 * fact (ignored too). Reading is bounded before any work: entries, declared and actual sizes.
 */
import { z } from 'zod';
import { unzipFiles, zipFiles } from '../../text/zip.js';
import { AppError } from '../errors.js';

const strToU8 = (s: string) => new TextEncoder().encode(s);
const strFromU8 = (b: Uint8Array) => new TextDecoder().decode(b);

export const SCHEMA_VERSION = 1;

/** Largest archive accepted or written (bytes of the ZIP); an upload is also within the body limit. */
export const MAX_ARCHIVE_BYTES = 10 * 2 ** 20;
/** Largest sum of an archive's entries once inflated: what the server holds while reading it. */
export const MAX_INFLATED_BYTES = 32 * 2 ** 20;
/** Most entries (documents) an archive may hold. */
export const MAX_ENTRIES = 20_000;

const When = z.string().datetime({ offset: true }).nullable().optional();

export const TransferFact = z.object({
  text: z.string(),
  source_id: z.string().nullable().optional(),
  fact_type: z.string(),
  context: z.string().nullable().optional(),
  event_date: When,
  occurred_start: When,
  occurred_end: When,
  mentioned_at: When,
  metadata: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
  chunk_index: z.number().int().nullable().optional(),
  entities: z.array(z.string()).optional(),
  /** mnemo's: each entity name's type (a Hindsight archive has none: OTHER). */
  entity_types: z.record(z.string(), z.string()).optional(),
  created_at: When,
});
export type TransferFact = z.infer<typeof TransferFact>;

export const TransferDocument = z.object({
  id: z.string().min(1),
  original_text: z.string().nullable().optional(),
  retain_params: z.record(z.string(), z.unknown()).nullable().optional(),
  tags: z.array(z.string()).optional(),
  created_at: When,
  chunks: z.array(z.object({ chunk_index: z.number().int(), chunk_text: z.string() })).optional(),
  facts: z.array(TransferFact),
});
export type TransferDocument = z.infer<typeof TransferDocument>;

export const TransferManifest = z.object({
  schema_version: z.number().int(),
  source_bank_id: z.string(),
  exported_at: When,
  document_count: z.number().int().optional(),
  fact_count: z.number().int().optional(),
  observation_count: z.number().int().optional(),
  archive_type: z.enum(['documents', 'bank']).optional(),
});
export type TransferManifest = z.infer<typeof TransferManifest>;

export interface ParsedArchive {
  manifest: TransferManifest;
  documents: TransferDocument[];
  /** Facts of no document (mnemo's `loose_facts.json`). */
  loose: TransferFact[];
  /** Entries of `observations.json`: not imported (the bank consolidates its own). */
  observations: number;
}

const corrupt = (why: string) =>
  new AppError('validation_error', `not a document-transfer archive: ${why}`, {
    details: [{ path: 'file', message: why }],
  });

/** Writes an archive. */
export function buildArchive(a: Omit<ParsedArchive, 'observations'>): Uint8Array {
  const files: Record<string, Uint8Array> = {
    'manifest.json': strToU8(JSON.stringify(a.manifest, null, 2)),
  };
  a.documents.forEach((d, i) => {
    files[`documents/${String(i).padStart(6, '0')}.json`] = strToU8(JSON.stringify(d));
  });
  if (a.loose.length) files['loose_facts.json'] = strToU8(JSON.stringify(a.loose));
  return zipFiles(files);
}

function parseJson<T>(bytes: Uint8Array, name: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(strFromU8(bytes));
  } catch {
    throw corrupt(`${name} is not JSON`);
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw corrupt(`${name}: ${issue?.path.join('.') || '(root)'} ${issue?.message ?? 'is invalid'}`);
  }
  return r.data;
}

/**
 * Reads an archive: a 413 past the size caps, a 400 for anything that is not a well-formed
 * archive of the supported schema. The caps are checked on the sizes the ZIP declares before
 * anything is inflated, and inflation writes into buffers of those sizes, so a ZIP that lies
 * about them fails instead of growing.
 */
export function readArchive(zip: Uint8Array): ParsedArchive {
  if (zip.length > MAX_ARCHIVE_BYTES)
    throw new AppError('payload_too_large', `an archive is at most ${MAX_ARCHIVE_BYTES} bytes`);
  let entries = 0;
  let inflated = 0;
  let files: Record<string, Uint8Array>;
  try {
    files = unzipFiles(zip, (f) => {
      const wanted =
        f.name === 'manifest.json' ||
        f.name === 'observations.json' ||
        f.name === 'loose_facts.json' ||
        (f.name.startsWith('documents/') && f.name.endsWith('.json'));
      if (!wanted) return false;
      entries++;
      inflated += f.originalSize;
      if (entries > MAX_ENTRIES)
        throw new AppError('payload_too_large', `an archive holds at most ${MAX_ENTRIES} documents`);
      if (inflated > MAX_INFLATED_BYTES)
        throw new AppError('payload_too_large', `an archive inflates to at most ${MAX_INFLATED_BYTES} bytes`);
      return true;
    });
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw corrupt(`the ZIP cannot be read (${(err as Error).message})`);
  }
  const manifestBytes = files['manifest.json'];
  if (!manifestBytes) throw corrupt('manifest.json is missing');
  const manifest = parseJson(manifestBytes, 'manifest.json', TransferManifest);
  if (manifest.schema_version !== SCHEMA_VERSION)
    throw corrupt(
      `schema_version ${manifest.schema_version} is not supported (this server reads ${SCHEMA_VERSION})`,
    );
  const names = Object.keys(files)
    .filter((n) => n.startsWith('documents/'))
    .sort();
  const documents = names.map((n) => parseJson(files[n]!, n, TransferDocument));
  const loose = files['loose_facts.json']
    ? parseJson(files['loose_facts.json'], 'loose_facts.json', z.array(TransferFact))
    : [];
  const observations = files['observations.json']
    ? parseJson(files['observations.json'], 'observations.json', z.array(z.unknown())).length
    : 0;
  return { manifest, documents, loose, observations };
}
