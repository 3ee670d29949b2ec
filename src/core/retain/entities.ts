import type { Deps } from '../services.js';
import type { IntakeStore } from '../../store/store.js';
import type { EntityInput } from '../types.js';

/** An entity name as the store keys it. */
export const entityKey = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();

interface Known {
  name: string;
  key: string;
  aliases: string[];
}

const tokens = (key: string) => key.split(' ');

/**
 * The known entities of one resolution, indexed by what it matches on: name key, alias key,
 * and the first and last word of longer names. Every lookup is a map access, so resolving K
 * names against N candidates costs O(K + N), never O(K × N).
 */
class KnownIndex {
  readonly #byKey = new Map<string, Known>();
  readonly #byAlias = new Map<string, Known[]>();
  /** Longer (multi-word) names by their first and by their last word. */
  readonly #byWord = new Map<string, Known[]>();

  add(k: Known): void {
    if (!this.#byKey.has(k.key)) this.#byKey.set(k.key, k);
    for (const a of k.aliases) push(this.#byAlias, a, k);
    const t = tokens(k.key);
    if (t.length > 1) for (const w of new Set([t[0]!, t.at(-1)!])) push(this.#byWord, w, k);
  }

  addAlias(k: Known, alias: string): void {
    k.aliases.push(alias);
    push(this.#byAlias, alias, k);
  }

  named(key: string): Known | undefined {
    return this.#byKey.get(key);
  }

  /** The first entity (by mention count) with this alias. */
  aliased(key: string): Known | undefined {
    return this.#byAlias.get(key)?.[0];
  }

  /** Longer names whose first or last word is `word`. */
  longer(word: string): Known[] {
    return this.#byWord.get(word) ?? [];
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!list.includes(value)) list.push(value);
}

/**
 * Maps entity names to the bank's existing entities: same name or a known alias (any case);
 * "Bob" to the one known "Bob Smith" (first or last name of exactly one longer name); "Bob Smith"
 * to a known "Bob" that no other full name has claimed. Ambiguous or unrelated names stay
 * separate: "Bob" with both "Bob Smith" and "Bob Jones" known, or "Ann" vs "Anna".
 * Returns the canonical name for each input key, with the alias to record when it differs.
 * Candidates come from one indexed store lookup per call (names, aliases, first and last
 * words), and matching is by maps: linear in the number of names.
 */
export async function resolveEntityNames(
  s: Deps<IntakeStore>,
  projectId: string,
  bankId: string,
  names: string[],
): Promise<Map<string, { name: string; alias?: string }>> {
  const originals = new Map<string, string>();
  for (const n of names) {
    const key = entityKey(n);
    if (key && !originals.has(key)) originals.set(key, n.trim().replace(/\s+/g, ' '));
  }
  const keys = [...originals.keys()];
  const out = new Map<string, { name: string; alias?: string }>();
  if (keys.length === 0) return out;
  // A one-word name needs the longer names it may be part of; a longer name, the one-word
  // entity named by its first word.
  const words = [...new Set(keys.map((k) => (tokens(k).length === 1 ? k : tokens(k)[0]!)))];
  const index = new KnownIndex();
  for (const e of await s.store.findEntities(projectId, bankId, keys, words))
    index.add({ name: e.name, key: entityKey(e.name), aliases: e.aliases.map(entityKey) });
  // Full names first, so that "Bob" in the same request can join "Bob Smith".
  const ordered = [...keys].sort((a, b) => tokens(b).length - tokens(a).length);
  for (const key of ordered) {
    const parts = tokens(key);
    const longer = parts.length === 1 ? index.longer(key) : [];
    const named = index.named(key);
    if (named) {
      out.set(key, { name: named.name });
      continue;
    }
    // A learnt alias counts while it is unambiguous: "Bob" stops meaning "Bob Smith" once "Bob Jones" is known.
    const aliased = index.aliased(key);
    if (aliased && longer.every((k) => k === aliased)) {
      out.set(key, { name: aliased.name, alias: key });
      continue;
    }
    if (parts.length === 1) {
      if (longer.length === 1 && !aliased) {
        out.set(key, { name: longer[0]!.name, alias: key });
        continue;
      }
    } else {
      const short = index.named(parts[0]!);
      const claimed = short?.aliases.some(
        (a) => tokens(a).length > 1 && tokens(a)[0] === parts[0] && a !== key,
      );
      if (short && !claimed) {
        out.set(key, { name: short.name, alias: key });
        index.addAlias(short, key);
        continue;
      }
    }
    // New entity: later names of this request may resolve to it.
    const original = originals.get(key)!;
    index.add({ name: original, key, aliases: [] });
    out.set(key, { name: original });
  }
  return out;
}

/** Rewrites entity lists to canonical names (keeping the alias to record). */
export function applyResolution(
  entities: EntityInput[],
  resolved: Map<string, { name: string; alias?: string }>,
): EntityInput[] {
  return entities.map((e) => {
    const r = resolved.get(entityKey(e.text));
    return r ? { text: r.name, type: e.type, ...(r.alias ? { alias: e.text.trim() } : {}) } : e;
  });
}
