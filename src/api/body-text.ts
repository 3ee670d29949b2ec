/**
 * Bodies refused before any handler runs: nested deeper than MAX_JSON_DEPTH, or holding text
 * PostgreSQL cannot store: U+0000 (in text or jsonb) and unpaired UTF-16 surrogates (jsonb
 * rejects their `\ud800` escapes). Refused before any handler runs, because some write more
 * than one statement (a Retain creates its bank before storing the items).
 */

/** A JSON `\u0000` escape (preceded by an even number of backslashes, so not itself escaped). */
const NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/i;
/** Any surrogate escape: only then is the body parsed to look for an unpaired one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
  }
  return false;
}

/** Deepest nesting a request body may have: far beyond any real metadata, well within the stack. */
export const MAX_JSON_DEPTH = 64;

/** How deeply the JSON text nests objects and arrays (brackets inside strings do not count). */
function jsonDepth(body: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/**
 * A member named `__proto__` (JSON.parse makes it an own member). Validation would drop it
 * silently and any plain object it were copied into would take it as its prototype, so a body
 * holding one is refused: it cannot mean what its sender meant.
 */
function hasProtoMember(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasProtoMember);
  if (value && typeof value === 'object') {
    return Object.hasOwn(value, '__proto__') || Object.values(value).some(hasProtoMember);
  }
  return false;
}

/** Only a body with the name written out or with an escape can hold such a member. */
const PROTO_HINT = /__proto__|\\u/;

/** Why a JSON body cannot be stored, or null. Malformed JSON is left to the validator. */
export function unstorableText(body: string): string | null {
  if (jsonDepth(body) > MAX_JSON_DEPTH) return `request body nests deeper than ${MAX_JSON_DEPTH} levels`;
  if (NUL_ESCAPE.test(body)) return 'request body contains a NUL character (\\u0000), which cannot be stored';
  const surrogates = SURROGATE_ESCAPE.test(body);
  if (!surrogates && !PROTO_HINT.test(body)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (hasProtoMember(parsed)) return "request body has a member named '__proto__', which is not allowed";
  return surrogates && hasLoneSurrogate(parsed)
    ? 'request body contains an unpaired UTF-16 surrogate (such as \\ud800), which is not valid Unicode text'
    : null;
}
