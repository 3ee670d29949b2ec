import { invalid, notFound } from './errors.js';
import { checkId } from './ids.js';

/**
 * A key's bank scope: the banks it may see and touch, as exact ids or prefix patterns ending in
 * `*` (`user-42/*` = every id starting `user-42/`). `null` = every bank of the project.
 */
export type BankScope = readonly string[] | null;

/** Most patterns one key may carry; an application wanting more mints more keys. */
export const MAX_BANK_PATTERNS = 100;

/**
 * Validated, NFC, de-duplicated patterns. A `*` may only end a pattern (it is not a glob), and
 * a bare `*` is refused: a key for every bank carries no `banks`.
 */
export function checkBankPatterns(patterns: readonly string[]): string[] {
  if (patterns.length === 0)
    throw invalid('banks', 'banks must list at least one bank or pattern (omit it for all banks)');
  if (patterns.length > MAX_BANK_PATTERNS)
    throw invalid('banks', `banks lists more than ${MAX_BANK_PATTERNS} patterns`);
  const out = new Set<string>();
  patterns.forEach((raw, i) => {
    const path = `banks.${i}`;
    const p = raw.normalize('NFC');
    checkId('bank pattern', p, path);
    const body = p.endsWith('*') ? p.slice(0, -1) : p;
    if (body.includes('*')) throw invalid(path, "'*' may only end a bank pattern");
    if (body.length === 0) throw invalid(path, "a bare '*' is every bank: omit banks instead");
    out.add(p);
  });
  return [...out];
}

/** Whether a bank id (NFC) is within the scope. */
export function inScope(scope: BankScope, bankId: string): boolean {
  if (scope === null) return true;
  return scope.some((p) => (p.endsWith('*') ? bankId.startsWith(p.slice(0, -1)) : bankId === p));
}

/**
 * Refuses a bank outside the scope exactly as a missing bank is refused (404), so a scoped key
 * cannot tell which other banks exist.
 */
export function requireInScope(scope: BankScope, bankId: string): void {
  if (!inScope(scope, bankId)) throw notFound(`bank '${bankId}'`);
}

/** The scope split for SQL: exact ids and id prefixes. */
export function scopeParts(scope: readonly string[]): { exact: string[]; prefixes: string[] } {
  return {
    exact: scope.filter((p) => !p.endsWith('*')),
    prefixes: scope.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1)),
  };
}
