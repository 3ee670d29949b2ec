import type { Embedder } from '../../src/embed/embedder.js';

/**
 * An embedder over `real` that holds the call embedding a text containing `mark` until
 * `release()`: `entered` resolves when it is held (a job's slice stopped mid-way, for attacks
 * that act while it waits).
 */
export function heldEmbedder(real: Embedder, mark = 'HOLD') {
  let entered: () => void = () => {};
  let release: () => void = () => {};
  const held = {
    entered: new Promise<void>((r) => (entered = r)),
    release: new Promise<void>((r) => (release = r)),
  };
  const embedder: Embedder = {
    id: real.id,
    dimensions: real.dimensions,
    async embed(texts, signal) {
      if (texts.some((x) => x.includes(mark))) {
        entered();
        await held.release;
      }
      return real.embed(texts, signal);
    },
  };
  return { embedder, entered: held.entered, release: () => release() };
}
