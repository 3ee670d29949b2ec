/**
 * What the tests of a language model client share, whatever its provider: a request, a JSON
 * Schema to ask for, and one fake server for the suite, as it was when the suite started before
 * every test.
 */
import { after, before, beforeEach } from 'node:test';
import type { CompletionRequest } from '../../src/llm/model.js';
import type { FakeReply, FakeServer } from './fake-http.js';

/** A structured output's schema: one number `a`. */
export const SCHEMA = { name: 'facts', schema: { type: 'object', properties: { a: { type: 'number' } } } };

/** A completion request of one user message. */
export const ask = (content: string, extra: Partial<CompletionRequest> = {}): CompletionRequest => ({
  messages: [{ role: 'user', content }],
  ...extra,
});

/**
 * Starts a fake before the suite's tests and closes it after them; before each test it forgets
 * the requests it received and goes back to its default replies. Call inside `describe`.
 */
export function fakeForSuite<R extends FakeReply, F extends FakeServer<R>>(start: () => Promise<F>): () => F {
  let fake: F | undefined;
  before(async () => {
    fake = await start();
  });
  beforeEach(() => {
    fake!.requests.length = 0;
    fake!.respond();
  });
  after(() => fake?.close());
  return () => fake!;
}
