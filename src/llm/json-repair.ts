import { LlmError } from './errors.js';

/**
 * Parses JSON the way local models tend to write it: inside ```json fences, wrapped in prose, with
 * trailing commas, single quotes, unquoted keys, comments, Python `True`/`False`/`None`, raw newlines in
 * strings, missing commas between items, or cut off mid-way (open strings and brackets get closed; a
 * dangling key or half a word is dropped). Throws `LlmError` kind `bad_response` when nothing usable is found.
 */
export function parseLaxJson(text: string): unknown {
  const fenced = /```[A-Za-z]*[^\S\n]*\n?([\s\S]*?)(?:```|$)/.exec(text)?.[1];
  for (const source of fenced === undefined ? [text] : [fenced, text]) {
    const direct = tryJson(source.trim());
    if (direct.ok) return direct.value;
    const found = scan(source);
    if (found) return found.value;
  }
  throw new LlmError(
    'bad_response',
    `model output is not valid JSON, even after repair (${text.length} chars)`,
  );
}

/** Openings tried before giving up, so long hopeless outputs fail fast. */
const MAX_STARTS = 20;

const KEYWORDS = new Map([
  ['true', 'true'],
  ['True', 'true'],
  ['false', 'false'],
  ['False', 'false'],
  ['null', 'null'],
  ['None', 'null'],
  ['undefined', 'null'],
  ['NaN', 'null'],
]);

const NUMBER = /-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const STRICT_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const WORD = /[A-Za-z_$][\w$]*/y;
const VALID_ESCAPE = /^(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/;

type Parsed = { ok: true; value: unknown } | { ok: false };

interface Found {
  value: unknown;
  /** Characters of the source the value spans. */
  length: number;
}

function tryJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Tries each `{` or `[` as the start of the answer and keeps the longest value found, so a bracket in
 * the surrounding prose ("see [1]") does not win over the real answer.
 */
function scan(source: string): Found | undefined {
  let best: Found | undefined;
  let from = 0;
  for (let tries = 0; tries < MAX_STARTS; tries++) {
    const start = nextOpening(source, from);
    if (start < 0) break;
    const found = repairFrom(source, start);
    if (found && (!best || found.length > best.length)) best = found;
    from = start + (found?.length ?? 1);
  }
  return best;
}

function nextOpening(source: string, from: number): number {
  const brace = source.indexOf('{', from);
  const bracket = source.indexOf('[', from);
  if (brace < 0 || bracket < 0) return Math.max(brace, bracket);
  return Math.min(brace, bracket);
}

interface Frame {
  close: '}' | ']';
  /** In an object, the next item is a key. */
  expectKey: boolean;
  /** An item just ended, so a comma is due before the next one. */
  afterItem: boolean;
}

/** Rewrites the value starting at `start` into strict JSON; undefined when it cannot be made to parse. */
function repairFrom(src: string, start: number): Found | undefined {
  const stack: Frame[] = [];
  let out = '';
  // The last point where the output was a complete prefix, for cutting back truncated output.
  let safe = { length: 0, closers: '' };
  const closers = () =>
    stack
      .map((f) => f.close)
      .reverse()
      .join('');
  const endValue = () => {
    const top = stack.at(-1);
    if (top) top.afterItem = true;
    safe = { length: out.length, closers: closers() };
  };
  /** Starts an item, inserting a missing comma; tells whether the item is an object key. */
  const beginItem = (): boolean => {
    const top = stack.at(-1);
    if (!top) return false;
    if (top.afterItem) {
      out += ',';
      top.afterItem = false;
      top.expectKey = top.close === '}';
    }
    return top.expectKey;
  };
  const endKey = () => {
    const top = stack.at(-1);
    if (top) top.expectKey = false;
  };

  let i = start;
  while (i < src.length) {
    const ch = src[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '{' || ch === '[') {
      if (beginItem()) return undefined;
      out += ch;
      stack.push({ close: ch === '{' ? '}' : ']', expectKey: ch === '{', afterItem: false });
      safe = { length: out.length, closers: closers() };
      i++;
    } else if (ch === '}' || ch === ']') {
      const at = stack.map((f) => f.close).lastIndexOf(ch);
      i++;
      // A stray closer is skipped; a missing one is supplied by closing everything above the match.
      if (at < 0) continue;
      while (stack.length > at) {
        if (out.endsWith(',')) out = out.slice(0, -1);
        out += stack.pop()!.close;
      }
      if (stack.length === 0) {
        const parsed = tryJson(out);
        return parsed.ok ? { value: parsed.value, length: i - start } : undefined;
      }
      endValue();
    } else if (ch === ',') {
      const top = stack.at(-1)!;
      top.afterItem = false;
      top.expectKey = top.close === '}';
      out += ',';
      i++;
    } else if (ch === ':') {
      out += ':';
      i++;
    } else if (ch === '"' || ch === "'") {
      const isKey = beginItem();
      const str = readString(src, i);
      out += str.literal;
      i = str.end;
      if (!str.terminated) break;
      if (isKey) endKey();
      else endValue();
    } else if (ch === '/' && (src[i + 1] === '/' || src[i + 1] === '*')) {
      const end = src[i + 1] === '/' ? src.indexOf('\n', i) : src.indexOf('*/', i + 2) + 1;
      i = end <= 0 ? src.length : end + 1;
    } else {
      NUMBER.lastIndex = i;
      WORD.lastIndex = i;
      const number = NUMBER.exec(src)?.[0];
      const word = number === undefined ? WORD.exec(src)?.[0] : undefined;
      const token = number ?? word;
      if (token === undefined) {
        // A lone sign or dot as the last character is a number cut off; anything else is not JSON.
        if (i === src.length - 1) break;
        return undefined;
      }
      const isKey = beginItem();
      i += token.length;
      if (isKey) {
        out += JSON.stringify(number === undefined ? token : String(Number(token)));
        endKey();
        continue;
      }
      const literal = number === undefined ? KEYWORDS.get(token) : normalizeNumber(token);
      if (literal === undefined) {
        // Half a keyword at the very end is truncation; elsewhere a bare word means this is not JSON.
        if (i >= src.length) break;
        return undefined;
      }
      out += literal;
      endValue();
    }
  }
  return closeTruncated(out, closers(), safe, src.length - start);
}

/** Output ran out with brackets open: close them, or cut back to the last complete item and close those. */
function closeTruncated(
  out: string,
  closers: string,
  safe: { length: number; closers: string },
  length: number,
): Found | undefined {
  const whole = tryJson(out + closers);
  if (whole.ok) return { value: whole.value, length };
  const cut = tryJson(out.slice(0, safe.length) + safe.closers);
  return cut.ok ? { value: cut.value, length } : undefined;
}

/** Reads a single- or double-quoted string into a JSON string literal; unterminated means truncated. */
function readString(src: string, start: number): { literal: string; end: number; terminated: boolean } {
  const quote = src[start];
  let body = '';
  let i = start + 1;
  while (i < src.length) {
    const ch = src[i]!;
    if (ch === quote) return { literal: `"${body}"`, end: i + 1, terminated: true };
    if (ch === '\\') {
      // Cut off right after the backslash: the escape is lost, the text before it is kept.
      if (i + 1 === src.length) break;
      const sequence = VALID_ESCAPE.exec(src.slice(i + 1, i + 6))?.[0];
      if (sequence !== undefined) {
        body += `\\${sequence}`;
        i += 1 + sequence.length;
      } else if (src[i + 1] === "'") {
        body += "'";
        i += 2;
      } else {
        // An escape JSON does not know (a Windows path, say) is kept as a literal backslash.
        body += '\\\\';
        i++;
      }
    } else {
      body += ch === '"' ? '\\"' : ch < ' ' ? controlEscape(ch) : ch;
      i++;
    }
  }
  return { literal: `"${body}"`, end: src.length, terminated: false };
}

function controlEscape(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `1.`, `.5` and `007` are numbers to a model but not to JSON. */
function normalizeNumber(token: string): string {
  return STRICT_NUMBER.test(token) ? token : String(Number(token));
}
