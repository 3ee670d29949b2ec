/**
 * Bodies refused before any handler runs: nested deeper than MAX_JSON_DEPTH, or holding text
 * PostgreSQL cannot store: U+0000 (in text or jsonb) and unpaired UTF-16 surrogates (jsonb
 * rejects their `\ud800` escapes). Refused before any handler runs, because some write more
 * than one statement (a Retain creates its bank before storing the items). Also a member named
 * `__proto__` (JSON.parse makes it an own member): validation would drop it silently and any
 * plain object it were copied into would take it as its prototype, so a body holding one cannot
 * mean what its sender meant. `json-body.ts` reads a body and makes these checks in turns.
 */

/** Deepest nesting a request body may have: far beyond any real metadata, well within the stack. */
export const MAX_JSON_DEPTH = 64;

export const DEPTH_REFUSED = `request body nests deeper than ${MAX_JSON_DEPTH} levels`;
export const NUL_REFUSED = 'request body contains a NUL character (\\u0000), which cannot be stored';
export const PROTO_REFUSED = "request body has a member named '__proto__', which is not allowed";
export const LONE_SURROGATE_REFUSED =
  'request body contains an unpaired UTF-16 surrogate (such as \\ud800), which is not valid Unicode text';
