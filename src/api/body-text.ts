/**
 * Text PostgreSQL cannot store: U+0000 (in text or jsonb) and unpaired UTF-16 surrogates (jsonb
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

/** Why a JSON body cannot be stored, or null. Malformed JSON is left to the validator. */
export function unstorableText(body: string): string | null {
  if (NUL_ESCAPE.test(body)) return 'request body contains a NUL character (\\u0000), which cannot be stored';
  if (!SURROGATE_ESCAPE.test(body)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  return hasLoneSurrogate(parsed)
    ? 'request body contains an unpaired UTF-16 surrogate (such as \\ud800), which is not valid Unicode text'
    : null;
}
