/**
 * What one slice of a Retain may take on: items, entities named, characters. A slice is one
 * transaction, and on the embedded engine no other tenant's statement runs until it ends: each
 * new entity costs ~0.5 ms to write (its keys, links and their foreign-key checks), and slices
 * of 500 held it 300–700 ms on a busy machine.
 */
export const SLICE_ITEMS = 25;
export const SLICE_ENTITIES = 200;
export const SLICE_CHARS = 100_000;

/** The end of the slice that starts at item `start`: at least one item, then within every bound. */
export function sliceEnd(
  items: readonly { content: string; context?: string; entities?: readonly unknown[] }[],
  start: number,
): number {
  let end = start;
  let entities = 0;
  let chars = 0;
  while (end < items.length && end - start < SLICE_ITEMS) {
    const it = items[end]!;
    entities += it.entities?.length ?? 0;
    chars += it.content.length + (it.context?.length ?? 0);
    if (end > start && (entities > SLICE_ENTITIES || chars > SLICE_CHARS)) break;
    end++;
  }
  return end;
}
