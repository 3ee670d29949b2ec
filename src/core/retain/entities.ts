import type { Services } from '../services.js';
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
 * Maps entity names to the bank's existing entities: same name or a known alias (any case);
 * "Bob" to the one known "Bob Smith" (first or last name of exactly one longer name); "Bob Smith"
 * to a known "Bob" that no other full name has claimed. Ambiguous or unrelated names stay
 * separate: "Bob" with both "Bob Smith" and "Bob Jones" known, or "Ann" vs "Anna".
 * Returns the canonical name for each input key, with the alias to record when it differs.
 */
export async function resolveEntityNames(
  s: Services,
  projectId: string,
  bankId: string,
  names: string[],
): Promise<Map<string, { name: string; alias?: string }>> {
  const keys = [...new Set(names.map(entityKey).filter(Boolean))];
  const out = new Map<string, { name: string; alias?: string }>();
  if (keys.length === 0) return out;
  const known: Known[] = (
    await s.store.findEntities(projectId, bankId, keys, [...new Set(keys.flatMap(tokens))])
  ).map((e) => ({ name: e.name, key: entityKey(e.name), aliases: e.aliases.map(entityKey) }));
  // Full names first, so that "Bob" in the same request can join "Bob Smith".
  const ordered = [...keys].sort((a, b) => tokens(b).length - tokens(a).length);
  for (const key of ordered) {
    const parts = tokens(key);
    const longer = known.filter((k) => {
      const t = tokens(k.key);
      return parts.length === 1 && t.length > 1 && (t[0] === key || t.at(-1) === key);
    });
    const named = known.find((k) => k.key === key);
    if (named) {
      out.set(key, { name: named.name });
      continue;
    }
    // A learnt alias counts while it is unambiguous: "Bob" stops meaning "Bob Smith" once "Bob Jones" is known.
    const aliased = known.find((k) => k.aliases.includes(key));
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
      const short = known.find((k) => k.key === parts[0]);
      const claimed = short?.aliases.some((a) => tokens(a).length > 1 && tokens(a)[0] === parts[0] && a !== key);
      if (short && !claimed) {
        out.set(key, { name: short.name, alias: key });
        short.aliases.push(key);
        continue;
      }
    }
    // New entity: later names of this request may resolve to it.
    const original = names.find((n) => entityKey(n) === key)!.trim().replace(/\s+/g, ' ');
    known.push({ name: original, key, aliases: [] });
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
