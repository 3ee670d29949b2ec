import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { AppError } from '../contract/errors.js';
import { minimalPdf } from '../../test/helpers/pdf.js';
import { MAX_READING, pdfText } from './pdf.js';

const LIMITS = { maxPages: 10, maxChars: 100_000, maxCpuMs: 60_000, maxWallMs: 600_000 };

/** One page whose content stream inflates to `mb` MB: seconds of reading from a few kB. */
function inflatingPdf(mb: number): Uint8Array {
  const z = deflateSync(Buffer.from(`BT /F1 12 Tf 72 720 Td (hi) Tj ET\n${' '.repeat(mb << 20)}`), {
    level: 9,
  });
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
  ];
  const head = objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join('');
  return Buffer.concat([
    Buffer.from(
      `%PDF-1.4\n${head}4 0 obj\n<< /Length ${z.length} /Filter /FlateDecode >>\nstream\n`,
      'latin1',
    ),
    z,
    Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1'),
  ]);
}

const refused = (code: string, words: RegExp) => (err: unknown) =>
  err instanceof AppError && err.code === code && words.test(err.message);

describe('pdfText: PDFs are read in a worker thread, under a deadline', () => {
  test('a PDF that parses normally gives its text, and pdf.js never loads in the server thread', async () => {
    const text = await pdfText('a.pdf', minimalPdf(['Hello (world)', 'second line']), LIMITS);
    assert.equal(text, 'Hello (world)\nsecond line');
    assert.equal((globalThis as { pdfjsLib?: unknown }).pdfjsLib, undefined);
  });

  test('a reading past its CPU time is refused (413) while the event loop keeps turning', async () => {
    let turns = 0;
    let reading = true;
    const counting = (async () => {
      while (reading) {
        await new Promise((resolve) => setImmediate(resolve));
        turns++;
      }
    })();
    await assert.rejects(
      pdfText('bomb.pdf', inflatingPdf(64), { ...LIMITS, maxCpuMs: 1 }),
      refused('payload_too_large', /bomb\.pdf.*more than 0\.001 s of CPU time/),
    );
    reading = false;
    await counting;
    assert.ok(turns > 0, 'the event loop turned while the PDF was being read');
    // The thread cut off is not the one that reads the next PDF.
    assert.equal(await pdfText('next.pdf', minimalPdf(['after the bomb']), LIMITS), 'after the bomb');
  });

  test('a busy machine does not refuse a PDF: the time spent is the thread’s CPU, shared by an upload’s PDFs', async () => {
    // An upload whose reading began 30 s ago (a loaded machine, files before this one): the wall
    // clock is past the CPU limit, the reading threads' CPU is not.
    const spent = { cpuMs: 0 };
    const since = Date.now() - 30_000;
    const limits = { ...LIMITS, maxCpuMs: 20_000, since, spent };
    assert.equal(await pdfText('late.pdf', minimalPdf(['read all the same']), limits), 'read all the same');
    assert.equal(await pdfText('slow.pdf', inflatingPdf(16), limits), 'hi');
    assert.ok(spent.cpuMs > 0, `the upload's PDFs cost ${spent.cpuMs} ms of CPU`);
    // The next PDF of the same upload finds the CPU already spent: refused before it is read.
    await assert.rejects(
      pdfText('more.pdf', minimalPdf(['more']), { ...limits, maxCpuMs: spent.cpuMs }),
      refused('payload_too_large', /more\.pdf.*CPU time/),
    );
  });

  test('PDFs read at once beyond MAX_READING wait their turn, within their wall-clock bound', async () => {
    const names = Array.from({ length: MAX_READING * 2 + 1 }, (_, i) => `file ${i}`);
    const texts = await Promise.all(names.map((n) => pdfText(`${n}.pdf`, minimalPdf([n]), LIMITS)));
    assert.deepEqual(texts, names);
    // One waiting behind bombs that hold every thread: refused at its deadline, not left waiting.
    const started = Date.now();
    let bombsRead = false;
    const bombs = Promise.all(
      Array.from({ length: MAX_READING }, (_, i) =>
        pdfText(`bomb${i}.pdf`, inflatingPdf(32), { ...LIMITS, since: started }),
      ),
    ).then((texts) => {
      bombsRead = true;
      return texts;
    });
    await assert.rejects(
      pdfText('queued.pdf', minimalPdf(['queued']), { ...LIMITS, maxWallMs: 1, since: started }),
      refused('payload_too_large', /queued\.pdf.*took longer than 0\.001 s/),
    );
    assert.equal(bombsRead, false);
    assert.deepEqual(await bombs, Array(MAX_READING).fill('hi'));
  });

  test('the page and character caps still refuse (413); a damaged file is a 400', async () => {
    const two = minimalPdf(['x'.repeat(50)]);
    await assert.rejects(
      pdfText('p.pdf', two, { ...LIMITS, maxPages: 0 }),
      refused('payload_too_large', /1 pages/),
    );
    await assert.rejects(
      pdfText('c.pdf', two, { ...LIMITS, maxChars: 10 }),
      refused('payload_too_large', /10 char/),
    );
    await assert.rejects(
      pdfText('d.pdf', new TextEncoder().encode('%PDF-1.4 not really'), LIMITS),
      refused('validation_error', /d\.pdf.*could not be read as a PDF/),
    );
  });
});
