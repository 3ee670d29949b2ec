import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractEntities, TAGGED_PIECE } from './entities.js';
import { segmentsForTagging } from './segments.js';

test('pieces give back the whole text, each within the limit', () => {
  const texts = [
    'Mr. '.repeat(2000),
    'e.g. '.repeat(3000),
    '漢字日本語'.repeat(1000),
    '😀'.repeat(3000),
    `${'word '.repeat(500)}\n\n${'Another line here.\n'.repeat(200)}`,
    'short',
    '',
  ];
  for (const text of texts) {
    const pieces = segmentsForTagging(text, 300);
    assert.equal(pieces.join(''), text);
    assert.ok(
      pieces.every((p) => p.length <= 300),
      `a piece over 300 in ${JSON.stringify(text.slice(0, 12))}`,
    );
    // No piece starts with the second half of a surrogate pair.
    assert.ok(pieces.every((p) => !/^[\uDC00-\uDFFF]/.test(p)));
  }
  assert.deepEqual(segmentsForTagging('short', 300), ['short']);
});

test('cuts prefer a paragraph break, then a sentence end after an ordinary word', () => {
  const para = `${'a b '.repeat(40)}\n\n${'c d '.repeat(40)}`;
  assert.deepEqual(segmentsForTagging(para, 250)[0], `${'a b '.repeat(40)}\n\n`);
  // "Mrs." does not end a sentence: the cut falls after "home.", not between "Mrs." and "Smith".
  const text = `${'x '.repeat(60)}She went home. Then Mrs. Smith came in. ${'y '.repeat(60)}`;
  const first = segmentsForTagging(text, 200)[0]!;
  assert.ok(first.endsWith('home. '), JSON.stringify(first.slice(-20)));
});

test('names found in pieces are the names found in the whole', () => {
  const lines = [
    'Caroline: I went to the LGBTQ support group in Boston yesterday with Melanie.',
    "Melanie: That's great! Caroline's painting is amazing. Did you see Dr. Smith at Google?",
    'Yesterday I met John Smith at the Museum of Modern Art in New York City.',
    'I work at the University of Washington and my sister lives in San Francisco, California.',
    'She studies at Stanford University and swims in Lake Tahoe on weekends on 8 May 2023.',
  ];
  const text = Array.from({ length: 40 }, (_, i) => lines[i % lines.length]).join('\n');
  assert.ok(text.length > 3 * TAGGED_PIECE);
  const whole = extractEntities(text, Number.POSITIVE_INFINITY);
  assert.ok(whole.length >= 15);
  assert.deepEqual(extractEntities(text), whole);
  assert.deepEqual(
    extractEntities(text.replaceAll('\n', ' ')),
    extractEntities(text.replaceAll('\n', ' '), Infinity),
  );
});
