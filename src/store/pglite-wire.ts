import { type PGlite, protocol } from '@electric-sql/pglite';

/**
 * The embedded engine's answers read straight from its bytes. PGlite's own reader copies every
 * answer four times (its write callback, its buffer, its parser, the returned copy), then each
 * field once more into a new buffer for a `TextDecoder`, builds a message object per row and a
 * row from `Object.fromEntries`: ~12% of a Recall's CPU on this engine went there (a V8 profile
 * of `bench/recall-cpu.ts --engine pglite`, 100 candidates of 19 fields per Recall). Here the
 * answer is copied once out of the WebAssembly memory and each field is decoded in place.
 * Values go through PGlite's own type parsers (`pg.parsers`), so the rows are those `query`
 * returns. Errors are handed to PGlite's parser, so they are its `DatabaseError`s.
 */

/** One exchange's answer: its rows, and what a statement or portal described. */
export interface Answer<T> {
  rows: T[];
  /** Parameter type oids of a statement described ('t'), else empty. */
  paramTypes: number[];
  /** The rows' columns: of the last row description read, else those given. */
  fields: Field[];
}

/** A result column: its name and type oid (which chooses its parser). */
export interface Field {
  name: string;
  oid: number;
}

/**
 * Sends `messages` (whole protocol messages, the last a Sync) in one exchange and reads the
 * answer. `fields`: the columns of rows that come without a description (a prepared statement
 * described once).
 */
export async function exchange<T>(
  pg: PGlite,
  messages: Uint8Array[],
  fields: Field[] = [],
): Promise<Answer<T>> {
  return decode<T>(await answerBytes(pg, messages), pg.parsers, fields);
}

/** Sends `messages` (whole protocol messages, the last a Sync) in one exchange: the answer's bytes, copied. */
export async function answerBytes(pg: PGlite, messages: Uint8Array[]): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  // The chunk is a view of the engine's memory, reused after the callback: copy it. PGlite keeps
  // this callback as its writer until its own next exchange sets its own (`query`, `exec` and
  // `transaction` all do: they go through `execProtocolStream`).
  await pg.execProtocolRawStream(join(messages), {
    syncToFs: false,
    onRawData: (c) => chunks.push(c.slice()),
  });
  return chunks.length === 1 ? chunks[0]! : join(chunks);
}

/**
 * An answer's bytes not read yet, with the columns of its rows when they come without a
 * description: what the engine's thread sends, to be read (`decode`) on the main thread.
 */
export class AnswerBytes {
  constructor(
    readonly bytes: Uint8Array<ArrayBuffer>,
    readonly fields: Field[],
  ) {}
}

/** Whether an answer holds an error message (its statement failed). */
export function failed(bytes: Uint8Array): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + 5 <= bytes.length; at += 1 + view.getInt32(at + 1))
    if (bytes[at] === 0x45) return true;
  return false;
}

function join(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export type Parsers = PGlite['parsers'];

/** Reads an answer's rows (`fields`: their columns when no description comes with them); throws its error. */
export function decode<T>(bytes: Uint8Array, parsers: Parsers, described: Field[]): Answer<T> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rows: T[] = [];
  let paramTypes: number[] = [];
  let fields = described;
  let error: Error | undefined;
  let at = 0;
  while (at + 5 <= buf.length) {
    const type = buf[at]!;
    const end = at + 1 + buf.readInt32BE(at + 1);
    let p = at + 5;
    if (type === 0x44 /* D: a row */) {
      const n = buf.readInt16BE(p);
      p += 2;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const len = buf.readInt32BE(p);
        p += 4;
        const f = fields[i]!;
        if (len < 0) row[f.name] = null;
        else {
          const text = buf.toString('utf8', p, p + len);
          p += len;
          const parse = parsers[f.oid];
          row[f.name] = parse ? parse(text, f.oid) : text;
        }
      }
      rows.push(row as T);
    } else if (type === 0x54 /* T: the rows' description */) {
      const n = buf.readInt16BE(p);
      p += 2;
      fields = new Array(n);
      for (let i = 0; i < n; i++) {
        const z = buf.indexOf(0, p);
        const name = buf.toString('utf8', p, z);
        // table oid (4), column (2), then the type oid (4); size, modifier, format after it.
        fields[i] = { name, oid: buf.readInt32BE(z + 7) };
        p = z + 19;
      }
    } else if (type === 0x74 /* t: the parameters' types */) {
      const n = buf.readInt16BE(p);
      paramTypes = new Array(n);
      for (let i = 0; i < n; i++) paramTypes[i] = buf.readInt32BE(p + 2 + 4 * i);
    } else if (type === 0x45 /* E: the statement failed */ && !error)
      error = databaseError(bytes.subarray(at, end));
    // Anything else (completions, notices, ready for query) carries nothing a caller reads:
    // PGlite's `query` drops notices too unless it is debugging, and mnemo listens to no channel.
    at = end;
  }
  if (error) throw error;
  return { rows, paramTypes, fields };
}

/** The error message as PGlite's parser makes it (a `DatabaseError`, with its SQLSTATE code). */
function databaseError(message: Uint8Array): Error {
  let error: Error | undefined;
  new protocol.Parser().parse(message.slice(), (m) => {
    error ??= m as unknown as Error;
  });
  return error ?? new Error('the embedded database failed a statement');
}
