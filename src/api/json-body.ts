/**
 * A JSON request body read in turns of the event loop. `JSON.parse` of a 10 MB body holds the
 * loop for hundreds of milliseconds when it holds many small values (half a second for an
 * object of 500,000 members), and the checks of `body-text.ts` walked the text or the parsed
 * value several times more. Here one linear scan does every check and finds the structure,
 * giving a turn every SCAN_SLICE characters; the value is then parsed in pieces of about PIECE
 * characters (runs of small members or elements, or slices of a long string), with a turn every
 * PARSE_SLICE characters, and assembled. The result is what `JSON.parse` gives, and a body it
 * would refuse is malformed here too: the scan checks the separators between pieces, and
 * `JSON.parse` checks everything inside one.
 */
import { breathe } from '../store/breathe.js';
import {
  DEPTH_REFUSED,
  ELEMENTS_REFUSED,
  LONE_SURROGATE_REFUSED,
  MAX_JSON_DEPTH,
  MAX_JSON_ELEMENTS,
  MAX_JSON_MEMBERS,
  MEMBERS_REFUSED,
  NUL_REFUSED,
  PROTO_REFUSED,
} from './body-text.js';

/** Characters of a piece parsed with one `JSON.parse` (a value this long or longer is split). */
export const PIECE = 64 * 1024;
/** Characters scanned between two turns. */
export const SCAN_SLICE = 256 * 1024;
/** Characters parsed (and assembled) between two turns. */
export const PARSE_SLICE = 128 * 1024;

/** Bytes decoded to text between two turns. */
export const DECODE_SLICE = 256 * 1024;

/**
 * A request body's text, decoded from its bytes a slice at a time with a turn between slices
 * (one `TextDecoder` call over 10 MB held the loop as long as the rest of the read). The text is
 * what `Request.text()` gives: UTF-8, a leading byte order mark dropped, invalid bytes as U+FFFD.
 */
export async function bodyText(
  req: { arrayBuffer(): Promise<ArrayBuffer> },
  opts: { turn?: () => Promise<void>; slice?: number } = {},
): Promise<string> {
  const bytes = new Uint8Array(await req.arrayBuffer());
  const slice = opts.slice ?? DECODE_SLICE;
  const decoder = new TextDecoder();
  if (bytes.length <= slice) return decoder.decode(bytes);
  const turn = opts.turn ?? breathe;
  let text = '';
  for (let at = 0; at < bytes.length; at += slice) {
    if (at > 0) await turn();
    text += decoder.decode(bytes.subarray(at, at + slice), { stream: true });
  }
  return text + decoder.decode();
}

/** What a body is: its value, a refusal (the 400 message), or malformed JSON. */
export type JsonBody =
  | { ok: true; value: unknown }
  | { ok: false; refused: string }
  | { ok: false; malformed: true };

/** A value of PIECE characters or more, parsed in parts. */
interface Node {
  /** `leaf`: a value parsed in one piece (the small value of a member with a long name). */
  kind: 'array' | 'object' | 'string' | 'leaf';
  start: number;
  end: number;
  /** Arrays and objects: runs of small children (parsed together) and big children, in order. */
  parts: Part[];
}
type Part =
  | { start: number; end: number; node?: undefined }
  | { keyStart: number; keyEnd: number; node: Node };

// Where the scan expects the next token.
const VALUE = 0; // a value, or `]` when VALUE_OR_CLOSE
const AFTER = 1; // `,` or the closing bracket (or the end, after the root)
const KEY = 2; // a member's name, or `}` when KEY_OR_CLOSE
const COLON = 3;

/** Stops inside a string: its end, an escape, or half of a surrogate pair. */
const STRING_STOP = /["\\\ud800-\udfff]/g;
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
/** Ends a number or literal: whitespace or structure. */
const endsToken = (c: number) =>
  isSpace(c) ||
  c === 44 ||
  c === 58 ||
  c === 93 ||
  c === 125 ||
  c === 34 ||
  c === 123 ||
  c === 91 ||
  c === 92;
/** The value of the four hex digits at `at`, or -1. */
function hex4(text: string, at: number): number {
  let v = 0;
  for (let k = at; k < at + 4; k++) {
    const c = text.charCodeAt(k);
    const d = c >= 48 && c <= 57 ? c - 48 : (c | 32) >= 97 && (c | 32) <= 102 ? (c | 32) - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}
/** `\uD8`..`\uDF` at `at` (in either case). */
function surrogateEscapeAt(text: string, at: number): boolean {
  if (text.charCodeAt(at + 1) !== 117 || (text.charCodeAt(at + 2) | 32) !== 100) return false;
  const c = text.charCodeAt(at + 3) | 32;
  return c === 56 || c === 57 || (c >= 97 && c <= 102);
}
const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;

/**
 * Reads a JSON body in turns (`turn`, by default a turn of the event loop). Refusals, in this
 * order: nesting deeper than MAX_JSON_DEPTH, or an object or array wider than MAX_JSON_MEMBERS or
 * MAX_JSON_ELEMENTS (as soon as the scan meets them, while the text is well formed), and a
 * `\u0000` escape (whether or not the body parses), then, for a body that parses, a member named `__proto__` and an unpaired surrogate.
 */
export async function readJsonBody(
  text: string,
  opts: { turn?: () => Promise<void>; batch?: number } = {},
): Promise<JsonBody> {
  const turn = opts.turn ?? breathe;
  const piece = opts.batch ?? PIECE;
  const n = text.length;
  // Lexical state (as the checks always read the text, parsed or not).
  let depth = 0;
  let nul = false;
  let lone = false;
  let escapes = false; // a surrogate written as an escape (only then is a lone one refused)
  let high = false; // in a string, the last code unit was a high surrogate
  /** The next code unit of a string's value (-1: one that is no surrogate). */
  const codeUnit = (u: number) => {
    if (high && isLow(u)) high = false;
    else {
      if (high || isLow(u)) lone = true;
      high = isHigh(u);
    }
  };
  let proto = false;
  // Structure: one frame per open container, while the text is well formed.
  let broken = false;
  let state = VALUE;
  let canClose = false;
  let rootStart = -1;
  let rootEnd = -1;
  let root: Node | null = null;
  const fObject: boolean[] = [];
  const fStart: number[] = [];
  const fParts: (Part[] | null)[] = [];
  const fRunStart: number[] = [];
  const fRunEnd: number[] = [];
  const fKeyStart: number[] = [];
  const fKeyEnd: number[] = [];
  /** Commas met in each open container: one fewer than its members or elements. */
  const fCommas: number[] = [];
  let top = -1;

  const partsOfTop = (): Part[] => {
    let parts = fParts[top];
    if (!parts) {
      parts = [];
      fParts[top] = parts;
    }
    return parts;
  };
  /** A child value [start, end) of the open container (or the root) is complete. */
  const complete = (start: number, end: number, child: Node | null) => {
    if (top < 0) {
      rootStart = start;
      rootEnd = end;
      root = child;
      state = AFTER;
      return;
    }
    const from = fObject[top] ? fKeyStart[top]! : start;
    // A long member name is parsed in parts too, so its member is parsed on its own.
    const longName = !child && fObject[top] && fKeyEnd[top]! - fKeyStart[top]! >= piece;
    const node: Node | null = longName ? { kind: 'leaf', start, end, parts: [] } : child;
    if (node) {
      const parts = partsOfTop();
      if (fRunStart[top]! >= 0) parts.push({ start: fRunStart[top]!, end: fRunEnd[top]! });
      fRunStart[top] = -1;
      parts.push({ keyStart: fKeyStart[top]!, keyEnd: fKeyEnd[top]!, node });
    } else {
      if (fRunStart[top]! < 0) fRunStart[top] = from;
      fRunEnd[top] = end;
      if (end - fRunStart[top]! >= piece) {
        partsOfTop().push({ start: fRunStart[top]!, end });
        fRunStart[top] = -1;
      }
    }
    state = AFTER;
  };

  let i = 0;
  let nextTurn = SCAN_SLICE;
  while (i < n) {
    if (i >= nextTurn) {
      await turn();
      nextTurn = i + SCAN_SLICE;
    }
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: to its closing quote, stopping at escapes and surrogates only.
      const start = i;
      const isKey = !broken && state === KEY;
      if (!broken && state !== VALUE && state !== KEY) broken = true;
      let escaped = false;
      high = false;
      let closed = false;
      i++;
      while (i < n) {
        if (i >= nextTurn) {
          await turn();
          nextTurn = i + SCAN_SLICE;
        }
        // Searched a slice at a time: a 10 MB string has no stop to end the search before.
        const to = Math.min(n, i + SCAN_SLICE);
        STRING_STOP.lastIndex = 0;
        const m = STRING_STOP.exec(text.slice(i, to));
        const at = m ? i + m.index : to;
        if (high && at > i) {
          lone = true; // ordinary characters after a high surrogate
          high = false;
        }
        if (!m) {
          i = to;
          continue;
        }
        const s = text.charCodeAt(at);
        if (s === 34) {
          if (high) lone = true;
          i = at + 1;
          closed = true;
          break;
        }
        if (s === 92) {
          escaped = true;
          const e = text.charCodeAt(at + 1);
          // As the check this replaces read the text: a surrogate escape written anywhere.
          if (surrogateEscapeAt(text, at) || (e === 92 && surrogateEscapeAt(text, at + 1))) escapes = true;
          if ((e === 117 || e === 85) && text.startsWith('0000', at + 2)) nul = true;
          const unit = e === 117 ? hex4(text, at + 2) : -1;
          codeUnit(unit);
          // Past a whole \uXXXX escape; past the backslash and the next character otherwise.
          i = unit >= 0 ? at + 6 : at + 2;
          continue;
        }
        codeUnit(s); // a surrogate written as itself
        i = at + 1;
      }
      if (!closed) {
        broken = true;
        continue;
      }
      if (broken) continue;
      if (isKey) {
        const length = i - start - 2;
        if (length === 9 ? text.startsWith('__proto__', start + 1) : escaped && length <= 54) {
          try {
            if (JSON.parse(text.slice(start, i)) === '__proto__') proto = true;
          } catch {
            broken = true;
          }
        }
        fKeyStart[top] = start;
        fKeyEnd[top] = i;
        state = COLON;
      } else {
        complete(start, i, i - start >= piece ? { kind: 'string', start, end: i, parts: [] } : null);
      }
      continue;
    }
    if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) return { ok: false, refused: DEPTH_REFUSED };
      if (!broken) {
        if (state !== VALUE) broken = true;
        else {
          top++;
          fObject[top] = c === 123;
          fStart[top] = i;
          fParts[top] = null;
          fRunStart[top] = -1;
          fCommas[top] = 0;
          state = c === 123 ? KEY : VALUE;
          canClose = true;
        }
      }
      i++;
      continue;
    }
    if (c === 125 || c === 93) {
      depth--;
      if (!broken) {
        const fits = top >= 0 && fObject[top] === (c === 125);
        if (!fits || !(state === AFTER || (canClose && (c === 93 ? state === VALUE : state === KEY)))) {
          broken = true;
        } else {
          const start = fStart[top]!;
          const end = i + 1;
          let node: Node | null = null;
          if (end - start >= piece) {
            const parts = fParts[top] ?? [];
            if (fRunStart[top]! >= 0) parts.push({ start: fRunStart[top]!, end: fRunEnd[top]! });
            node = { kind: fObject[top] ? 'object' : 'array', start, end, parts };
          }
          fParts[top] = null;
          top--;
          complete(start, end, node);
        }
      }
      i++;
      continue;
    }
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === 92) {
      // Outside any string (so malformed): still refused when it escapes a NUL, as ever.
      let run = 1;
      while (text.charCodeAt(i + run) === 92) run++;
      const e = text.charCodeAt(i + run);
      if (run % 2 === 1 && (e === 117 || e === 85) && text.startsWith('0000', i + run + 1)) nul = true;
      broken = true;
      i += run;
      continue;
    }
    if (!broken) {
      if (c === 44 && state === AFTER && top >= 0) {
        // The width is refused before any schema walks it (body-text.ts).
        if (++fCommas[top]! >= (fObject[top] ? MAX_JSON_MEMBERS : MAX_JSON_ELEMENTS)) {
          return { ok: false, refused: fObject[top] ? MEMBERS_REFUSED : ELEMENTS_REFUSED };
        }
        state = fObject[top] ? KEY : VALUE;
        canClose = false;
      } else if (c === 58 && state === COLON) {
        state = VALUE;
        canClose = false;
      } else if (state === VALUE && c !== 44 && c !== 58) {
        // A number or literal: JSON.parse checks it with the piece that holds it.
        const start = i;
        while (i < n && !endsToken(text.charCodeAt(i))) {
          if (++i >= nextTurn) {
            await turn();
            nextTurn = i + SCAN_SLICE;
          }
        }
        complete(start, i, i - start >= piece ? { kind: 'leaf', start, end: i, parts: [] } : null);
        continue;
      } else broken = true;
    }
    i++;
  }
  if (nul) return { ok: false, refused: NUL_REFUSED };
  if (broken || top >= 0 || rootStart < 0) return { ok: false, malformed: true };

  let value: unknown;
  try {
    value = root ? await build(text, root, turn, piece) : JSON.parse(text.slice(rootStart, rootEnd));
  } catch {
    return { ok: false, malformed: true };
  }
  if (proto) return { ok: false, refused: PROTO_REFUSED };
  if (lone && escapes) return { ok: false, refused: LONE_SURROGATE_REFUSED };
  return { ok: true, value };
}

/** Parses a node part by part, giving a turn every PARSE_SLICE characters. */
async function build(text: string, root: Node, turn: () => Promise<void>, piece: number): Promise<unknown> {
  let sinceTurn = 0;
  const spent = async (chars: number) => {
    sinceTurn += chars;
    if (sinceTurn >= PARSE_SLICE) {
      sinceTurn = 0;
      await turn();
    }
  };
  const stringOf = async (start: number, end: number): Promise<string> => {
    if (end - start < piece) return JSON.parse(text.slice(start, end));
    let out = '';
    let from = start + 1;
    const last = end - 1;
    while (from < last) {
      const to = safeCut(text, from, Math.min(from + piece, last));
      out += JSON.parse(`"${text.slice(from, to)}"`);
      await spent(to - from);
      from = to;
    }
    return out;
  };
  const nodeValue = async (node: Node): Promise<unknown> => {
    if (node.kind === 'string') return stringOf(node.start, node.end);
    if (node.kind === 'leaf') return JSON.parse(text.slice(node.start, node.end));
    if (node.kind === 'array') {
      const out: unknown[] = [];
      for (const part of node.parts) {
        if (part.node) out.push(await nodeValue(part.node));
        else {
          for (const v of JSON.parse(`[${text.slice(part.start, part.end)}]`) as unknown[]) out.push(v);
          await spent(part.end - part.start);
        }
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const part of node.parts) {
      if (part.node) {
        const key = await stringOf(part.keyStart, part.keyEnd);
        member(out, key, await nodeValue(part.node));
      } else {
        const o = JSON.parse(`{${text.slice(part.start, part.end)}}`) as Record<string, unknown>;
        for (const k of Object.keys(o)) member(out, k, o[k]);
        await spent(part.end - part.start);
      }
    }
    return out;
  };
  return nodeValue(root);
}

/** Sets a member as JSON.parse does: `__proto__` too is an own member, not the prototype. */
function member(o: Record<string, unknown>, key: string, value: unknown) {
  if (key === '__proto__') {
    Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  } else o[key] = value;
}

/** `to`, or the start of the escape sequence it would cut in two (inside a string's text). */
function safeCut(text: string, from: number, to: number): number {
  let q = to - 1;
  while (q >= from && q >= to - 6 && text.charCodeAt(q) !== 92) q--;
  if (q < from || q < to - 6) return to;
  // A run of backslashes ending at q: pairs are escaped backslashes; an odd one starts an escape.
  let run = 1;
  while (q - run >= from && text.charCodeAt(q - run) === 92) run++;
  if (run % 2 === 0) return to;
  const length = text.charCodeAt(q + 1) === 117 ? 6 : 2;
  if (q + length <= to) return to;
  // Before the escape, or after it when it is the first thing left (pieces of a few characters).
  return q > from ? q : q + length;
}
