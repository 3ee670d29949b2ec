/** One page of a cursor-paged listing. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * A paged listing. `await` it for the first page; `for await` over it for every item of every
 * page (the next page is fetched only when the loop gets there); `.pages()` walks page by page.
 */
export class PagedList<T, P extends Page<T> = Page<T>> implements AsyncIterable<T>, PromiseLike<P> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<P>,
    private readonly startCursor?: string,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: awaiting a listing yields its first page, by design.
  then<A = P, B = never>(
    onfulfilled?: ((value: P) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.fetchPage(this.startCursor).then(onfulfilled, onrejected);
  }

  /** Every page in order, starting at the given cursor. */
  async *pages(): AsyncGenerator<P> {
    let cursor = this.startCursor;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      // A cursor seen before would loop forever; the listing is over either way.
      if (!page.next_cursor || seen.has(page.next_cursor)) return;
      seen.add(page.next_cursor);
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Collects every item (or the first `max`) into an array. */
  async toArray(max = Number.POSITIVE_INFINITY): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
