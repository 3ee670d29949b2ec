/**
 * The thread that reads a PDF (started by `pdfText` in `pdf.ts`): pdf.js reads a page in one turn,
 * and a crafted page can make that turn long, so the reading runs here, where it holds no request
 * and the server can end it by terminating the thread. It answers each `PdfJob` it is sent with a
 * `PdfOutcome`, and is kept for the next PDF (starting a thread and loading pdf.js costs ~1 s of CPU).
 */
import { readlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

/** What the server hands the thread: the bytes (transferred) and the count caps. */
export interface PdfJob {
  data: Uint8Array;
  maxPages: number;
  maxChars: number;
}

/** What the thread answers: the text, or why the file is refused (`pdf.ts` turns it into an AppError). */
export type PdfOutcome =
  | { ok: true; text: string }
  | { ok: false; refusal: 'too_large' | 'unreadable'; why: string };

/** What the thread says first: its thread id in the operating system (null where unknown). */
export interface ThreadHello {
  tid: number | null;
}

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

class Refusal extends Error {}

async function read(job: PdfJob): Promise<string> {
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = getDocument({
    data: job.data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    isOffscreenCanvasSupported: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    const doc = await task.promise;
    if (doc.numPages > job.maxPages)
      throw new Refusal(`the PDF has ${doc.numPages} pages, more than the ${job.maxPages} accepted`);
    const pages: string[] = [];
    let chars = 0;
    for (let n = 1; n <= doc.numPages; n++) {
      const text = await pageText(doc, n);
      chars += text.length;
      if (chars > job.maxChars)
        throw new Refusal(`its text is longer than the ${job.maxChars} characters accepted`);
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

/** Jobs are read one at a time, in the order they come: the server sends one, then waits. */
async function serve(job: PdfJob): Promise<PdfOutcome> {
  try {
    return { ok: true, text: await read(job) };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, refusal: 'too_large', why: err.message };
    const why = `could not be read as a PDF (${err instanceof Error ? err.message : String(err)})`;
    return { ok: false, refusal: 'unreadable', why };
  }
}

/** This thread's id in the operating system (Linux: /proc/thread-self names it), for `pdf.ts` to read its CPU time. */
function osThreadId(): number | null {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

const port = parentPort;
port?.postMessage({ tid: osThreadId() } satisfies ThreadHello);
port?.on('message', (job: PdfJob) => {
  serve(job).then((outcome) => port.postMessage(outcome));
});
