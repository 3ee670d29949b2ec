import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root (scripts/docs/ is two levels down). */
export const ROOT = join(import.meta.dirname, '../..');

/** One generated part of a doc: the file, the region's name, and how to write its content. */
export interface Region {
  readonly file: string;
  readonly name: string;
  readonly render: () => string;
}

const open = (name: string) => `<!-- generated:${name} -->`;
const close = (name: string) => `<!-- /generated:${name} -->`;

/** The note every region starts with, so an editor of the Markdown knows not to. */
const NOTE = (name: string) =>
  `<!-- written by \`npm run docs\` from the code; edit the code, not this (${name}) -->`;

/** The text of `doc` with region `name` holding `content`; throws when its markers are missing or repeated. */
export function fillRegion(doc: string, file: string, name: string, content: string): string {
  const start = doc.indexOf(open(name));
  const end = doc.indexOf(close(name));
  if (start < 0 || end < start || doc.indexOf(open(name), start + 1) >= 0)
    throw new Error(`${file}: needs one "${open(name)}" … "${close(name)}" pair`);
  const body = `${open(name)}\n${NOTE(name)}\n\n${content.trim()}\n\n${close(name)}`;
  return doc.slice(0, start) + body + doc.slice(end + close(name).length);
}

/** Each file with every region rendered, and the names of the regions that differ from the file on disk. */
export function renderAll(
  regions: readonly Region[],
  root = ROOT,
): { file: string; text: string; stale: string[] }[] {
  const files = [...new Set(regions.map((r) => r.file))];
  return files.map((file) => {
    const before = readFileSync(join(root, file), 'utf8');
    let text = before;
    const stale: string[] = [];
    for (const r of regions.filter((x) => x.file === file)) {
      const next = fillRegion(text, file, r.name, r.render());
      if (next !== text) stale.push(r.name);
      text = next;
    }
    return { file, text, stale };
  });
}

/** Writes every file whose regions are stale; returns `file: region` for each one rewritten. */
export function writeAll(regions: readonly Region[], root = ROOT): string[] {
  const out: string[] = [];
  for (const f of renderAll(regions, root)) {
    if (!f.stale.length) continue;
    writeFileSync(join(root, f.file), f.text);
    out.push(...f.stale.map((name) => `${f.file}: ${name}`));
  }
  return out;
}

/** A Markdown table; `|` and line breaks inside cells are escaped. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export const code = (s: string) => `\`${s}\``;
