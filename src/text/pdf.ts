import { AppError } from '../contract/errors.js';

/** Bounds on reading one PDF: what a hostile file (a "PDF bomb") can make the server do. */
export interface PdfLimits {
  /** Pages beyond this: the file is refused (413) before any page is read. */
  maxPages: number;
  /** Characters of text beyond this: refused (413) as soon as they are passed. */
  maxChars: number;
  /** Milliseconds of reading, all pages together: past it, refused (413). */
  maxMs: number;
  /** When that time started (`Date.now()`): the files of one upload share one deadline. Default: now. */
  since?: number;
}

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

const tooLarge = (name: string, why: string) =>
  new AppError('payload_too_large', `file '${name}': ${why}`, {
    details: [{ path: 'files', message: why }],
  });

/** The event loop's turn: other requests (and the embedded engine's users) run between pages. */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The text of a PDF, page by page, through pdf.js (its legacy build, for Node 20; no canvas: text
 * extraction draws nothing). Script evaluation and font loading are off. The page count is
 * checked before any page is read, the text length after each page, and the time spent against
 * one deadline; the event loop gets a turn between pages. A file pdf.js cannot read (damaged,
 * encrypted with a password, nested past the parser's stack) is a 400 naming it.
 */
export async function pdfText(name: string, data: Uint8Array, limits: PdfLimits): Promise<string> {
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const started = limits.since ?? Date.now();
  const task = getDocument({
    // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
    data: new Uint8Array(data),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    isOffscreenCanvasSupported: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    const doc = await task.promise.catch((err: unknown) => {
      throw unreadable(name, err);
    });
    if (doc.numPages > limits.maxPages)
      throw tooLarge(name, `the PDF has ${doc.numPages} pages, more than the ${limits.maxPages} accepted`);
    const pages: string[] = [];
    let chars = 0;
    for (let n = 1; n <= doc.numPages; n++) {
      await yieldTurn();
      if (Date.now() - started > limits.maxMs)
        throw tooLarge(name, `reading the PDF took longer than ${limits.maxMs / 1000} s`);
      const text = await pageText(doc, n).catch((err: unknown) => {
        throw unreadable(name, err);
      });
      chars += text.length;
      if (chars > limits.maxChars)
        throw tooLarge(name, `its text is longer than the ${limits.maxChars} characters accepted`);
      if (text) pages.push(text);
    }
    return pages.join('\n\n');
  } finally {
    await task.destroy();
  }
}

async function pageText(
  doc: { getPage(n: number): Promise<{ getTextContent(): Promise<{ items: unknown[] }>; cleanup(): void }> },
  n: number,
): Promise<string> {
  const page = await doc.getPage(n);
  const content = await page.getTextContent();
  page.cleanup();
  let text = '';
  for (const item of content.items as TextItem[]) {
    if (typeof item.str !== 'string') continue;
    text += item.str;
    text += item.hasEOL ? '\n' : item.str && !item.str.endsWith(' ') ? ' ' : '';
  }
  return text.replace(/[ \t]+\n/g, '\n').trim();
}

function unreadable(name: string, err: unknown): AppError {
  if (err instanceof AppError) return err;
  const why = `could not be read as a PDF (${err instanceof Error ? err.message : String(err)})`;
  return new AppError('validation_error', `file '${name}' ${why}`, {
    details: [{ path: 'files', message: why }],
  });
}
