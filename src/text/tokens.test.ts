import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countTokens, splitByTokens } from './tokens.js';

test('countTokens uses o200k_base', () => {
  assert.equal(countTokens(''), 0);
  assert.equal(countTokens('hello world'), 2);
  assert.ok(countTokens('Caroline: I went to the LGBTQ support group yesterday.') < 20);
});

test('special-token text is counted as plain text, not rejected', () => {
  assert.ok(countTokens('before <|endoftext|> after') > 3);
});

test('splitByTokens cuts into pieces within the limit that join back', () => {
  const text = 'x'.repeat(500);
  const pieces = splitByTokens(text, 10);
  assert.equal(pieces.join(''), text);
  for (const p of pieces) assert.ok(countTokens(p) <= 10);
});
