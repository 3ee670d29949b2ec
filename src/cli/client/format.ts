/** Output for humans (aligned tables) and scripts (`--json`). */
import { cliIo, out } from '../io.js';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** The one column cut to fit the terminal (long text). */
  flex?: boolean;
}

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replace(/\s*\n\s*/g, ' ⏎ ');
};

/**
 * An aligned text table. On a terminal the flexible column is cut with `…` so each row fits
 * the width; piped output keeps every character.
 */
export function table<T>(
  rows: T[],
  columns: Column<T>[],
  width = cliIo().stdout.isTTY ? (cliIo().stdout.columns ?? 0) : 0,
): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const flex = columns.findIndex((c) => c.flex);
  if (width > 0 && flex >= 0) {
    const others = widths.reduce((sum, w, i) => (i === flex ? sum : sum + w + 2), 0);
    widths[flex] = Math.max(columns[flex]!.header.length, Math.min(widths[flex]!, width - others - 1));
  }
  const fit = (s: string, i: number) => {
    const w = widths[i]!;
    const cut = s.length > w ? `${s.slice(0, Math.max(0, w - 1))}…` : s;
    return i === columns.length - 1 ? cut : cut.padEnd(w);
  };
  const lines = [columns.map((c, i) => fit(c.header, i)).join('  ')];
  for (const row of cells) lines.push(row.map(fit).join('  '));
  return lines.join('\n');
}

/** Prints the JSON for `--json`, else the human form. */
export function emit(json: boolean | undefined, data: unknown, human: () => string): void {
  out(json ? JSON.stringify(data, null, 2) : human());
}

/** `key: value` lines for one record. */
export function record(obj: Record<string, unknown>): string {
  const keys = Object.keys(obj);
  const w = Math.max(...keys.map((k) => k.length));
  return keys.map((k) => `${`${k}:`.padEnd(w + 1)} ${cell(obj[k])}`).join('\n');
}

/** `2024-05-08T13:56:00.000Z` -> `2024-05-08 13:56`. */
export const shortDate = (iso: string | null | undefined) => (iso ? iso.slice(0, 16).replace('T', ' ') : '');

/** Splits `a,b, c` into `['a','b','c']`. */
export const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
