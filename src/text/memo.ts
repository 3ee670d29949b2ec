/**
 * Memoises a pure function of a text, keeping the results of the texts seen most recently: two
 * generations of at most `maxChars / 2` characters of text each. A text is looked up in the
 * current one (one lookup: a Recall asks for the same hundred texts several times), then in the
 * previous one (and moved to the current one); when the current one is full it becomes the
 * previous one, and the previous one is dropped whole. So a text used again within the last
 * `maxChars / 2` characters of texts is never computed again, and at most about `maxChars`
 * characters of texts are kept. Recall reads the same memories again and again; their terms,
 * speaker and token count need computing once. Results are shared between callers: they must
 * not be changed.
 */
export function memoByText<T>(fn: (text: string) => T, maxChars = 4_000_000): (text: string) => T {
  const half = maxChars / 2;
  let current = new Map<string, T>();
  let previous = new Map<string, T>();
  let chars = 0;
  return (text) => {
    const hit = current.get(text);
    if (hit !== undefined) return hit;
    const value = previous.get(text) ?? fn(text);
    // A text longer than a generation is computed but not kept.
    if (text.length > half) return value;
    if (chars + text.length > half) {
      previous = current;
      current = new Map();
      chars = 0;
    }
    current.set(text, value);
    chars += text.length;
    return value;
  };
}
