import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chunkText, splitSentences } from './chunk.js';
import { countTokens } from './tokens.js';

test('splitSentences: abbreviations, initials and decimals do not end sentences', () => {
  assert.deepEqual(
    splitSentences('Dr. Smith went to Washington. He met Mr. Jones at 3 p.m. The weather was fine.'),
    ['Dr. Smith went to Washington.', 'He met Mr. Jones at 3 p.m.', 'The weather was fine.'],
  );
  assert.deepEqual(splitSentences('I like fruit, e.g. apples and pears. Also J. K. Rowling books.'), [
    'I like fruit, e.g. apples and pears.',
    'Also J. K. Rowling books.',
  ]);
  assert.deepEqual(splitSentences('Prices rose 3.5% in 2023. Apple Inc. makes phones etc. and more.'), [
    'Prices rose 3.5% in 2023.',
    'Apple Inc. makes phones etc. and more.',
  ]);
});

test('splitSentences: ellipses, quotes, exclamations and lower-case chat', () => {
  assert.deepEqual(splitSentences('I was thinking... maybe tomorrow? Sure... Why not!'), [
    'I was thinking... maybe tomorrow?',
    'Sure...',
    'Why not!',
  ]);
  assert.deepEqual(splitSentences('He said "Stop." Then he left.'), ['He said "Stop."', 'Then he left.']);
  assert.deepEqual(splitSentences('"Really?" she asked. I nodded.'), ['"Really?" she asked.', 'I nodded.']);
  assert.deepEqual(splitSentences('i went home. it was late. lol'), ['i went home.', 'it was late.', 'lol']);
  assert.deepEqual(splitSentences('See https://example.com/a.b for details. Thanks!'), [
    'See https://example.com/a.b for details.',
    'Thanks!',
  ]);
});

test('splitSentences: line breaks end sentences; blank input gives none', () => {
  assert.deepEqual(splitSentences('Line one\nLine two\n\nNew paragraph.'), [
    'Line one',
    'Line two',
    'New paragraph.',
  ]);
  assert.deepEqual(splitSentences('  \n '), []);
});

const transcript = [
  'Caroline: I went to a LGBTQ support group yesterday and it was so powerful. The stories were inspiring. I felt accepted.',
  'Melanie: Wow, that sounds great! What happened there? I would love to hear more about it. Tell me everything.',
  'Caroline: People shared their transition stories. It made me think about my own path. I want to help others too.',
].join('\n');

test('chunkText: short text is one trimmed chunk, empty text none', () => {
  assert.deepEqual(chunkText('  Hello there.  ', 10), ['Hello there.']);
  assert.deepEqual(chunkText(' \n ', 10), []);
  assert.throws(() => chunkText('x', 0), RangeError);
});

test('chunkText: whole turns are packed while they fit', () => {
  const chunks = chunkText(transcript, 60);
  assert.equal(chunks.length, 2);
  assert.equal(chunks.join('\n'), transcript);
  for (const c of chunks) assert.ok(countTokens(c) <= 60);
});

test('chunkText: a long turn is cut between sentences and keeps its speaker', () => {
  const chunks = chunkText(transcript, 20);
  for (const c of chunks) {
    assert.ok(countTokens(c) <= 20, c);
    assert.match(c, /^(Caroline|Melanie): /);
    assert.match(c, /[.!?]$/, 'no chunk ends mid-sentence');
  }
  assert.ok(chunks.includes('Caroline: The stories were inspiring. I felt accepted.'));
});

test('chunkText: paragraphs without speakers', () => {
  const text = 'First paragraph has one sentence. And another one here.\n\nSecond paragraph is short.';
  const chunks = chunkText(text, 12);
  assert.deepEqual(chunks, [
    'First paragraph has one sentence. And another one here.',
    'Second paragraph is short.',
  ]);
});

test('chunkText: only an over-long sentence is cut inside, and nothing is lost', () => {
  const long = `${'word '.repeat(60).trim()} https://example.com/${'x'.repeat(300)}.`;
  const chunks = chunkText(`Short one. ${long} Short two.`, 25);
  for (const c of chunks) assert.ok(countTokens(c) <= 25);
  assert.equal(chunks.join(' ').replace(/\s+/g, ''), `Short one. ${long} Short two.`.replace(/\s+/g, ''));
});

test('chunkText: every chunk is within the limit for many limits', () => {
  const text = Array.from({ length: 30 }, (_, i) => transcript.split('\n')[i % 3]).join('\n');
  for (const max of [8, 13, 21, 34, 55, 89, 144]) {
    const chunks = chunkText(text, max);
    for (const c of chunks) assert.ok(countTokens(c) <= max, `${max}: ${c}`);
  }
});
