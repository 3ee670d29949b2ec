/**
 * Bodies refused before any handler runs: nested deeper than MAX_JSON_DEPTH, wider than
 * MAX_JSON_MEMBERS or MAX_JSON_ELEMENTS, or holding text
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
/**
 * Most members an object of a request body may have. A schema walks every member before it can
 * check a size limit (zod's `z.record` took 1.2 s over 500,000), so a body is refused by its
 * shape first. No valid request comes near: the largest objects a request holds are metadata, at
 * most 64 KB as JSON, where 10,001 distinct members take at least 69 KB (`"a":0,` is 6 bytes,
 * and only the empty name and the 93 plain 1-character ASCII names are shorter than 7).
 */
export const MAX_JSON_MEMBERS = 10_000;
/**
 * Most elements an array of a request body may have: far above the longest list a request
 * takes (1,000 Retain items or evaluation cases, 100 entities, 64 tags) and above the 32,768
 * numbers 64 KB of metadata can hold.
 */
export const MAX_JSON_ELEMENTS = 100_000;
export const MEMBERS_REFUSED = `request body has an object of more than ${MAX_JSON_MEMBERS} members`;
export const ELEMENTS_REFUSED = `request body has an array of more than ${MAX_JSON_ELEMENTS} elements`;
export const NUL_REFUSED = 'request body contains a NUL character (\\u0000), which cannot be stored';
export const PROTO_REFUSED = "request body has a member named '__proto__', which is not allowed";
export const LONE_SURROGATE_REFUSED =
  'request body contains an unpaired UTF-16 surrogate (such as \\ud800), which is not valid Unicode text';
