import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { AppError } from '../contract/errors.js';
import type { PdfJob, PdfOutcome, ThreadHello } from './pdf-worker.js';

/** Bounds on reading one PDF: what a hostile file (a "PDF bomb") can make the server do. */
export interface PdfLimits {
  /** Pages beyond this: the file is refused (413) before any page is read. */
  maxPages: number;
  /** Characters of text beyond this: refused (413) as soon as they are passed. */
  maxChars: number;
  /**
   * Milliseconds of CPU time the reading thread may spend (with `spent`, all the PDFs of one
   * upload together): past it, the thread is ended and the file refused (413). CPU, not the wall
   * clock, so that a busy machine does not refuse a PDF that takes it longer to read.
   */
  maxCpuMs: number;
  /**
   * Milliseconds of wall-clock time from `since`, waiting for a turn included: the bound on a
   * reading that spends no CPU (waits for a turn, or stops making progress), well past `maxCpuMs`.
   */
  maxWallMs: number;
  /** When the wall-clock time started (`Date.now()`): the files of one upload share it. Default: now. */
  since?: number;
  /** The CPU time already spent by this upload's PDFs, added to as this one is read. */
  spent?: { cpuMs: number };
}

/** Heap one reading thread may use: past it the thread is ended and the file refused (413). */
const PDF_HEAP_MB = 256;

const tooLarge = (name: string, why: string) =>
  new AppError('payload_too_large', `file '${name}': ${why}`, {
    details: [{ path: 'files', message: why }],
  });

const unreadable = (name: string, why: string) =>
  new AppError('validation_error', `file '${name}' ${why}`, {
    details: [{ path: 'files', message: why }],
  });

/**
 * The thread's script, beside this file: `.js` once compiled; `.ts` when run through tsx (tests,
 * `npm start`, the `mnemo` bin), where a thread does not inherit tsx's loader, so a short
 * bootstrap registers it in the thread before importing the script. pdf.js is imported first,
 * by Node itself: through tsx's hooks it cost a thread ~0.6 s more CPU to start (measured: ~850
 * against ~260 ms), and the script's own import of it then finds it loaded.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './pdf-worker.ts' : './pdf-worker.js',
  import.meta.url,
);
const WORKER_ENTRY: string | URL = WORKER_URL.pathname.endsWith('.ts')
  ? `import(${JSON.stringify(import.meta.resolve('pdfjs-dist/legacy/build/pdf.mjs'))})
       .then(() => import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}))
       .then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`
  : WORKER_URL;

/**
 * The text of a PDF, page by page, through pdf.js (its legacy build, for Node 20; no canvas: text
 * extraction draws nothing) in a worker thread, so that no page, however crafted, holds the event
 * loop. Script evaluation and font loading are off. The page count is checked before any page is
 * read and the text length after each page (in the thread); the time against one deadline here:
 * past it the thread is terminated, mid-page if need be, and the file refused (413), as it is
 * when the thread runs out of its heap. A file pdf.js cannot read (damaged, encrypted with a
 * password, nested past the parser's stack) is a 400 naming it.
 */
export async function pdfText(name: string, data: Uint8Array, limits: PdfLimits): Promise<string> {
  const left = (limits.since ?? Date.now()) + limits.maxWallMs - Date.now();
  const late = () => tooLarge(name, `reading the PDF took longer than ${limits.maxWallMs / 1000} s`);
  if (left <= 0) throw late();
  const spent = limits.spent ?? { cpuMs: 0 };
  if (spent.cpuMs >= limits.maxCpuMs) throw tooCostly(name, limits.maxCpuMs);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), left);
  });
  deadline.catch(() => {});
  // At most MAX_READING PDFs are read at once, server-wide; waiting for a turn counts against the wall clock.
  const turn = takeTurn();
  try {
    await Promise.race([turn.ready, deadline]);
    return await readIn(name, data, limits, spent, deadline);
  } finally {
    clearTimeout(timer);
    turn.release();
  }
}

const tooCostly = (name: string, maxCpuMs: number) =>
  tooLarge(name, `reading the PDF took more than ${maxCpuMs / 1000} s of CPU time`);

/** How often a reading thread's CPU time is looked at: the CPU limit is kept to about this. */
const CPU_CHECK_MS = 50;

/** Reads one PDF in a reading thread (a kept one if there is one), racing the deadline and the CPU limit. */
async function readIn(
  name: string,
  data: Uint8Array,
  limits: PdfLimits,
  spent: { cpuMs: number },
  deadline: Promise<never>,
) {
  // pdf.js takes ownership of (detaches) the buffer it is given: the thread gets a copy.
  const copy = new Uint8Array(data);
  const job: PdfJob = { data: copy, maxPages: limits.maxPages, maxChars: limits.maxChars };
  const worker = idle.pop() ?? startWorker();
  worker.ref();
  const clock = threadClock(worker);
  let onMessage: ((o: PdfOutcome | ThreadHello) => void) | undefined;
  let onError: ((err: Error & { code?: string }) => void) | undefined;
  let onExit: (() => void) | undefined;
  let watch: NodeJS.Timeout | undefined;
  let reusable = false;
  try {
    const answer = new Promise<PdfOutcome>((resolve, reject) => {
      onMessage = (o) => {
        if (!('tid' in o)) resolve(o);
      };
      onError = (err) =>
        reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? tooLarge(name, `reading the PDF needs more than the ${PDF_HEAP_MB} MB of memory accepted`)
            : unreadable(name, `could not be read as a PDF (${err.message})`),
        );
      onExit = () => reject(unreadable(name, 'could not be read as a PDF (its reader stopped)'));
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.postMessage(job, [copy.buffer]);
    });
    const overCpu = new Promise<never>((_, reject) => {
      watch = setInterval(() => {
        if (spent.cpuMs + clock.used() > limits.maxCpuMs) reject(tooCostly(name, limits.maxCpuMs));
      }, CPU_CHECK_MS);
    });
    overCpu.catch(() => {});
    const outcome = await Promise.race([answer, deadline, overCpu]);
    reusable = true;
    if (outcome.ok) return outcome.text;
    throw outcome.refusal === 'too_large' ? tooLarge(name, outcome.why) : unreadable(name, outcome.why);
  } finally {
    clearInterval(watch);
    spent.cpuMs += clock.used();
    if (onMessage) worker.off('message', onMessage);
    if (onError) worker.off('error', onError);
    if (onExit) worker.off('exit', onExit);
    // A thread that answered is kept for the next PDF; one cut off mid-read is ended.
    if (reusable && idle.length < MAX_IDLE) {
      worker.unref();
      idle.push(worker);
    } else await worker.terminate();
  }
}

/** The OS thread id each reading thread said it has (`ThreadHello`). */
const threadIds = new WeakMap<Worker, number | null>();

/**
 * CPU milliseconds of a thread (user and system) from Linux's /proc/self/task/<tid>/stat, in
 * clock ticks (10 ms); null where there is no such file.
 */
function threadCpuMs(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces), in parentheses: utime is the 14th
    // field of the line, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Linux's USER_HZ, the unit of /proc's CPU times: 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time a reading thread spends from now on: `used()`, in milliseconds. The thread's own
 * CPU where Linux tells it. A new thread that has not yet said which it is (it is loading
 * pdf.js) counts nothing until it has, then everything since its start; where there is no
 * /proc, the wall clock (the limit is then a wall-clock one, as it was).
 */
function threadClock(worker: Worker): { used(): number } {
  const startedAt = performance.now();
  const tid = threadIds.get(worker);
  const from = tid == null ? 0 : (threadCpuMs(tid) ?? 0);
  return {
    used() {
      const id = threadIds.get(worker);
      if (id === undefined) return 0;
      const now = id === null ? null : threadCpuMs(id);
      return now === null ? performance.now() - startedAt : now - from;
    },
  };
}

/** PDFs read at once, server-wide: each thread may take a core and 256 MB, whatever the number of uploads. */
export const MAX_READING = 2;
let reading = 0;
const waiting: (() => void)[] = [];

/** A turn to read: `ready` once one of the MAX_READING is free; `release` gives it up (or leaves the queue). */
function takeTurn(): { ready: Promise<void>; release(): void } {
  let granted = false;
  let grant!: () => void;
  const ready = new Promise<void>((resolve) => {
    grant = () => {
      granted = true;
      reading++;
      resolve();
    };
  });
  if (reading < MAX_READING) grant();
  else waiting.push(grant);
  return {
    ready,
    release() {
      if (!granted) {
        const at = waiting.indexOf(grant);
        if (at >= 0) waiting.splice(at, 1);
        return;
      }
      granted = false;
      reading--;
      waiting.shift()?.();
    },
  };
}

/** Reading threads kept between PDFs, at most MAX_IDLE; one is taken per PDF being read. */
const idle: Worker[] = [];
const MAX_IDLE = MAX_READING;

function startWorker(): Worker {
  const worker = new Worker(WORKER_ENTRY, {
    eval: typeof WORKER_ENTRY === 'string',
    resourceLimits: { maxOldGenerationSizeMb: PDF_HEAP_MB },
    stdout: true,
    stderr: true,
  });
  // A kept thread that dies (its heap, a crash) is no longer offered.
  worker.on('exit', () => {
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
  });
  worker.on('error', () => {});
  worker.on('message', (m: PdfOutcome | ThreadHello) => {
    if ('tid' in m) threadIds.set(worker, m.tid);
  });
  return worker;
}
