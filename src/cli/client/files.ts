import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

/** Writes JSON through a temporary file and a rename, so a kill never leaves half a file. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(tmp, path);
}

/** The parsed JSON file, or undefined when it does not exist. */
export async function readJsonIfExists<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The non-blank lines of a file with their 1-based numbers, parsed as JSON objects. */
export async function* jsonLines(
  path: string,
): AsyncGenerator<{ lineNo: number; value: Record<string, unknown> }> {
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  for await (const line of rl) {
    lineNo++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`line ${lineNo} of ${path} is not JSON`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new Error(`line ${lineNo} of ${path} is not a JSON object`);
    yield { lineNo, value: value as Record<string, unknown> };
  }
}

const BLOCK = 1 << 20;

/** The lines of a file, last first, reading it backwards a block at a time. */
export async function* linesBackward(path: string): AsyncGenerator<string> {
  const fh = await open(path, 'r');
  try {
    let pos = (await fh.stat()).size;
    let rest = Buffer.alloc(0);
    while (pos > 0) {
      const len = Math.min(BLOCK, pos);
      pos -= len;
      const block = Buffer.alloc(len);
      await fh.read(block, 0, len, pos);
      const buf = Buffer.concat([block, rest]);
      // '\n' never occurs inside a UTF-8 multi-byte sequence, so splitting bytes is safe.
      let end = buf.length;
      for (let i = buf.length - 1; i >= 0; i--) {
        if (buf[i] !== 10) continue;
        if (end > i + 1) yield buf.toString('utf8', i + 1, end);
        end = i;
      }
      rest = buf.subarray(0, end);
    }
    if (rest.length) yield rest.toString('utf8');
  } finally {
    await fh.close();
  }
}

/** Writes to a stream, waiting when it asks for a pause. */
export async function put(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}
