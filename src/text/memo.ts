/**
 * Memoises a pure function of a text, keeping the results of the texts seen most recently
 * until their lengths add up to `maxChars` (least recently used out first). Recall reads the
 * same memories again and again; their terms, speaker and token count need computing once.
 * Results are shared between callers: they must not be changed.
 */
export function memoByText<T>(fn: (text: string) => T, maxChars = 4_000_000): (text: string) => T {
  const cache = new Map<string, T>();
  let chars = 0;
  return (text) => {
    const hit = cache.get(text);
    if (hit !== undefined) {
      // Re-inserted: Map keeps insertion order, so the first key is the least recently used.
      cache.delete(text);
      cache.set(text, hit);
      return hit;
    }
    const value = fn(text);
    cache.set(text, value);
    chars += text.length;
    for (const old of cache.keys()) {
      if (chars <= maxChars) break;
      cache.delete(old);
      chars -= old.length;
    }
    return value;
  };
}
