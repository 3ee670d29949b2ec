/**
 * A set of the `max` keys added most recently: what a process remembers of many banks without
 * growing with them (a key pushed out is as if never added).
 */
export class RecentKeys {
  readonly #keys = new Set<string>();
  constructor(private readonly max: number) {}

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  add(key: string): void {
    this.#keys.delete(key);
    this.#keys.add(key);
    if (this.#keys.size > this.max) this.#keys.delete(this.#keys.values().next().value!);
  }
}
