import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countTokens, splitByTokens, tokensExceed } from './tokens.js';

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

test('tokensExceed agrees with countTokens, without BPE for texts of at most max bytes', () => {
  const texts = [
    '',
    'Did Grace borrow three tomato plants in the garden this morning?',
    'x'.repeat(600),
    'é'.repeat(300),
    '漢字'.repeat(150),
    '🙂'.repeat(130),
    '\ud800'.repeat(200),
    'a b '.repeat(260),
  ];
  for (const text of texts)
    for (const max of [0, 1, 10, 100, 166, 167, 500, 520, 1000])
      assert.equal(tokensExceed(text, max), countTokens(text) > max, `${max}: ${text.slice(0, 20)}`);
});
