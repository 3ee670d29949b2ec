/**
 * A read-only word → rank table held in three typed arrays (an open-addressing hash table over the
 * words' UTF-16 code units), so that loading it from the cache file is a view, not 341k string and Map
 * allocations (about 0.4 s and 50 MB for a Map).
 */
export class Vocabulary {
  private readonly mask: number;

  /**
   * @param starts word r is `chars[starts[r] .. starts[r + 1]]`
   * @param slots power-of-two hash table of rank + 1, 0 where empty
   */
  constructor(
    readonly starts: Uint32Array,
    readonly chars: Uint16Array,
    readonly slots: Uint32Array,
  ) {
    this.mask = slots.length - 1;
  }

  /** Words in rank order; a repeated word keeps its first (most frequent) rank. */
  static fromWords(words: readonly string[]): Vocabulary {
    const starts = new Uint32Array(words.length + 1);
    for (let r = 0; r < words.length; r++) starts[r + 1] = starts[r]! + words[r]!.length;
    const chars = new Uint16Array(starts[words.length]!);
    // At most half full, so probes stay short.
    const slots = new Uint32Array(2 ** Math.ceil(Math.log2(Math.max(2, words.length * 2))));
    const vocabulary = new Vocabulary(starts, chars, slots);
    words.forEach((word, rank) => {
      for (let i = 0; i < word.length; i++) chars[starts[rank]! + i] = word.charCodeAt(i);
      if (vocabulary.get(word) !== undefined) return;
      let slot = hash(word) & vocabulary.mask;
      while (slots[slot] !== 0) slot = (slot + 1) & vocabulary.mask;
      slots[slot] = rank + 1;
    });
    return vocabulary;
  }

  get size(): number {
    return this.starts.length - 1;
  }

  /** Rank of `word`, or undefined when it is not in the vocabulary. */
  get(word: string): number | undefined {
    const { slots, mask } = this;
    for (let slot = hash(word) & mask; slots[slot] !== 0; slot = (slot + 1) & mask) {
      const rank = slots[slot]! - 1;
      if (this.equals(rank, word)) return rank;
    }
    return undefined;
  }

  private equals(rank: number, word: string): boolean {
    const start = this.starts[rank]!;
    if (this.starts[rank + 1]! - start !== word.length) return false;
    for (let i = 0; i < word.length; i++) if (this.chars[start + i] !== word.charCodeAt(i)) return false;
    return true;
  }
}

/** FNV-1a over UTF-16 code units. */
function hash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
