import { MAX_CONTENT_CHARS } from '../../contract/memories.js';
import { htmlToText } from '../../text/html.js';
import { pdfText } from '../../text/pdf.js';
import { AppError, invalid } from '../errors.js';
import type { Deps } from '../services.js';
import type { BankStore, LimitStore, OperationStore } from '../../store/store.js';
import { chargeRetain, requireRetainBudget } from '../quotas.js';
import { checkRetainRequest, type RetainItem, type RetainRequest } from './retain.js';
import { queueRetain } from './retain-async.js';

/** A file as uploaded: its name, declared type and bytes. */
export interface UploadedFile {
  name: string;
  type: string;
  data: Uint8Array;
}

/** What a caller says of one file (Hindsight's `files_metadata` entry). */
export interface FileMeta {
  document_id?: string;
  context?: string;
  tags?: string[];
  metadata?: Record<string, string>;
  timestamp?: Date;
}

/** Files one upload may carry. */
export const MAX_FILES = 20;
/** Characters of text one file may yield: ten Retain items of the longest content. */
export const MAX_FILE_TEXT_CHARS = 10 * MAX_CONTENT_CHARS;
/** Pages of one PDF. */
export const MAX_PDF_PAGES = 500;
/** CPU time (of the reading threads) reading all the PDFs of one upload may take. */
export const MAX_PDF_CPU_MS = 20_000;
/**
 * Wall-clock time reading the PDFs of one upload may take, waiting for a turn included: the bound
 * on a reading that spends no CPU, six times the CPU limit so that a loaded machine is not taken
 * for a hostile file.
 */
export const MAX_PDF_WALL_MS = 120_000;

/** The reading of one upload's files: when it began and the CPU its PDFs spent, shared by its PDFs. */
export interface UploadReading {
  since: number;
  spent: { cpuMs: number };
}

/** The kinds of file whose text is retained. */
export type FileKind = 'text' | 'markdown' | 'html' | 'pdf';

const BY_EXTENSION: Record<string, FileKind> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
};
const BY_TYPE: Record<string, FileKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

const unsupported = (name: string, why: string) =>
  new AppError(
    'unsupported_media_type',
    `file '${name}' ${why}; accepted are text-bearing files: plain text, Markdown, HTML and PDF`,
    { details: [{ path: 'files', message: why }] },
  );

/**
 * What a file is, from its bytes first: a PDF by its signature, anything else only if it is
 * UTF-8 text without NUL bytes, named (by extension or declared type) as text, Markdown or HTML.
 * An image, an archive or any other binary is a 415.
 */
export function fileKind(f: UploadedFile): FileKind {
  const head = Buffer.from(f.data.subarray(0, 1024)).toString('latin1');
  if (head.startsWith('%PDF-')) return 'pdf';
  const ext = /\.([a-z0-9]+)$/i.exec(f.name)?.[1]?.toLowerCase() ?? '';
  const type = f.type.split(';')[0]!.trim().toLowerCase();
  const named = BY_EXTENSION[ext] ?? BY_TYPE[type];
  if (named === 'pdf') throw unsupported(f.name, 'is named a PDF but does not start like one');
  if (named === undefined)
    throw unsupported(f.name, `is of a kind not accepted (${type || 'no type'}${ext ? `, .${ext}` : ''})`);
  if (f.data.includes(0)) throw unsupported(f.name, 'holds binary data, not text');
  return named;
}

const tooLarge = (name: string) => {
  const why = `its text is longer than the ${MAX_FILE_TEXT_CHARS} characters accepted`;
  return new AppError('payload_too_large', `file '${name}': ${why}`, {
    details: [{ path: 'files', message: why }],
  });
};

/**
 * The text of a file of a known kind, bounded (413 past the bounds). `upload`: the reading of the
 * upload it came in, so that its PDFs share one CPU limit and one wall-clock bound rather than
 * each having its own.
 */
export async function fileText(
  f: UploadedFile,
  kind: FileKind,
  upload: UploadReading = { since: Date.now(), spent: { cpuMs: 0 } },
): Promise<string> {
  if (kind === 'pdf')
    return pdfText(f.name, f.data, {
      maxPages: MAX_PDF_PAGES,
      maxChars: MAX_FILE_TEXT_CHARS,
      maxCpuMs: MAX_PDF_CPU_MS,
      maxWallMs: MAX_PDF_WALL_MS,
      ...upload,
    });
  let raw: string;
  try {
    raw = new TextDecoder('utf-8', { fatal: true }).decode(f.data);
  } catch {
    throw unsupported(f.name, 'is not UTF-8 text');
  }
  // Checked before stripping too: an HTML page's markup never costs more than its length.
  if (kind !== 'html' && raw.length > MAX_FILE_TEXT_CHARS) throw tooLarge(f.name);
  const text = (kind === 'html' ? htmlToText(raw) : raw).replace(/^\uFEFF/, '').trim();
  if (text.length > MAX_FILE_TEXT_CHARS) throw tooLarge(f.name);
  return text;
}

/** Splits text into pieces of at most `max` characters, at a paragraph, line or word end where there is one. */
export function splitText(text: string, max = MAX_CONTENT_CHARS): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = window.lastIndexOf('\n\n');
    if (cut < max / 2) cut = window.lastIndexOf('\n');
    if (cut < max / 2) cut = window.lastIndexOf(' ');
    if (cut < max / 2) cut = max;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out.filter((p) => p !== '');
}

/** What an upload queued: one operation per file, the document each went to. */
export interface FileRetainResult {
  success: true;
  async: true;
  bank_id: string;
  operation_ids: string[];
  files: {
    name: string;
    document_id: string;
    operation_id: string;
    kind: FileKind;
    characters: number;
    items_count: number;
  }[];
}

/**
 * Retains uploaded files: a project with no budget left is refused (429) before any file is read;
 * every file's kind and text are checked and extracted first (a 415, 413 or 400 for one refuses
 * the upload, nothing queued; PDFs share one CPU limit per upload); the whole upload is charged
 * at once (429, nothing queued); then each file's text is queued as an async Retain of one
 * document (its id given or the file's name), in items of at most the longest Retain content.
 * One operation per file, as Hindsight answers.
 */
export async function retainFiles(
  s: Deps<BankStore & LimitStore & OperationStore, 'limitDefaults' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  files: UploadedFile[],
  meta: FileMeta[],
  opts: { space?: string } = {},
): Promise<FileRetainResult> {
  if (files.length === 0) throw invalid('files', 'at least one file is required');
  if (files.length > MAX_FILES) throw invalid('files', `at most ${MAX_FILES} files per upload`);
  if (meta.length > files.length)
    throw invalid('request.files_metadata', `${meta.length} entries for ${files.length} files`);
  await requireRetainBudget(s, projectId);
  const upload: UploadReading = { since: Date.now(), spent: { cpuMs: 0 } };
  const requests: { file: UploadedFile; kind: FileKind; text: string; req: RetainRequest }[] = [];
  for (const [i, file] of files.entries()) {
    const kind = fileKind(file);
    const text = await fileText(file, kind, upload);
    if (text === '') throw invalid(`files.${i}`, `file '${file.name}' holds no text`);
    const m = meta[i] ?? {};
    const item = (content: string): RetainItem => ({
      content,
      ...(m.context === undefined ? {} : { context: m.context }),
      ...(m.tags === undefined ? {} : { tags: m.tags }),
      ...(m.metadata === undefined ? {} : { metadata: m.metadata }),
      ...(m.timestamp === undefined ? {} : { timestamp: m.timestamp }),
    });
    const req = {
      document_id: m.document_id ?? file.name,
      space: opts.space,
      items: splitText(text).map(item),
    };
    // Every file's request checked (its document id among them) before any is queued.
    checkRetainRequest(req);
    requests.push({ file, kind, text, req });
  }
  // The upload is charged whole (quotas and budgets), so it is queued whole or refused whole.
  const refund = await chargeRetain(
    s,
    projectId,
    requests.flatMap((r) => r.req.items),
  );
  const out: FileRetainResult['files'] = [];
  for (const [i, { file, kind, text, req }] of requests.entries()) {
    const { result: r } = await queueRetain(s, projectId, bankId, req, {}, refund).catch(
      async (err: unknown) => {
        await refund(requests.slice(i).flatMap((q) => q.req.items));
        throw err;
      },
    );
    out.push({
      name: file.name,
      document_id: r.document_id ?? file.name,
      operation_id: r.operation_id,
      kind,
      characters: text.length,
      items_count: r.items_count,
    });
  }
  return {
    success: true,
    async: true,
    bank_id: bankId,
    operation_ids: out.map((f) => f.operation_id),
    files: out,
  };
}
