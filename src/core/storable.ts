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
  // The path is only spelled out for the error: a 1 MB Retain has ~100k strings to look at.
  const at: (string | number)[] = [path];
  const check = (str: string) => {
    const why = unstorable(str);
    if (!why) return;
    const where = at.join('.');
    throw new AppError('validation_error', `${where}: ${why}`, { details: [{ path: where, message: why }] });
  };
  const walk = (v: unknown): void => {
    if (typeof v === 'string') check(v);
    else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        at.push(i);
        walk(v[i]);
        at.pop();
      }
    } else if (v && typeof v === 'object' && !(v instanceof Date)) {
      for (const k of Object.keys(v)) {
        at.push(k);
        check(k);
        walk((v as Record<string, unknown>)[k]);
        at.pop();
      }
    }
  };
  walk(value);
}
