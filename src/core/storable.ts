import { AppError } from './errors.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be stored in a PostgreSQL text or jsonb value, or null. */
function unstorable(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text';
  return null;
}

/**
 * Refuses (400, naming the field) a value holding text the database cannot store, at any depth
 * of objects and arrays, keys included. Writes check this before they create anything (a
 * Retain's bank), whatever the entry point: HTTP, MCP, or a queued operation.
 */
export function checkStorable(value: unknown, path: string): void {
  const walk = (v: unknown, at: string): void => {
    if (typeof v === 'string') {
      const why = unstorable(v);
      if (why)
        throw new AppError('validation_error', `${at}: ${why}`, { details: [{ path: at, message: why }] });
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => {
        walk(x, `${at}.${i}`);
      });
    } else if (v && typeof v === 'object' && !(v instanceof Date)) {
      for (const [k, x] of Object.entries(v)) {
        walk(k, `${at}.${k}`);
        walk(x, `${at}.${k}`);
      }
    }
  };
  walk(value, path);
}
