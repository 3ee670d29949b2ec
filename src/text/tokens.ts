import { countTokens as bpeCount, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';

// gpt-tokenizer throws on special-token text such as "<|endoftext|>" by default; memory
// content is data, so such text is counted as the ordinary characters it is.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Token count with OpenAI's o200k_base BPE, used for recall budgets and chunking. */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : bpeCount(text, AS_TEXT);
}

/**
 * Cuts text into pieces of at most `maxTokens` o200k_base tokens, at token boundaries.
 * A last resort for text with no better place to cut (a long URL, a run without spaces).
 */
export function splitByTokens(text: string, maxTokens: number): string[] {
  const tokens = encode(text, AS_TEXT);
  const pieces: string[] = [];
  for (let i = 0; i < tokens.length; i += maxTokens) pieces.push(decode(tokens.slice(i, i + maxTokens)));
  return pieces;
}
