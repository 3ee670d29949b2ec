import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keywordTerms, stem, termFrequencies } from './terms.js';

test('inflected forms share a stem', () => {
  const groups = [
    ['running', 'runs', 'ran', 'run'],
    ['painted', 'painting', 'paints', 'paint'],
    ['adoption', 'adopted', 'adopting', 'adopt'],
    ['stories', 'story'],
    ['movies', 'movie'],
    ['studied', 'studies', 'studying', 'study'],
    ['happily', 'happiness', 'happy'],
    ['hiking', 'hiked', 'hikes', 'hike'],
    ['weddings', 'wedding'],
    ['met', 'meeting', 'meets', 'meet'],
    ['went', 'going', 'goes', 'go'],
    ['boxes', 'box'],
    ['churches', 'church'],
    ['agreed', 'agreement', 'agree'],
    ['excited', 'excitement', 'excite'],
    ['education', 'educated', 'educate'],
    ['children', 'child'],
    ['kindness', 'kind'],
    ['planned', 'planning', 'plan'],
    ['tried', 'tries', 'try'],
  ];
  for (const words of groups) {
    const stems = new Set(words.map(stem));
    assert.equal(stems.size, 1, `${words.join(', ')} -> ${[...stems].join(', ')}`);
  }
});

test('unrelated words stay apart', () => {
  const pairs = [
    ['care', 'car'],
    ['plane', 'plan'],
    ['wine', 'win'],
    ['news', 'new'],
    ['family', 'fami'],
    ['jones', 'jon'],
    ['thing', 'th'],
    ['need', 'ne'],
  ];
  for (const [a, b] of pairs) assert.notEqual(stem(a!), stem(b!), `${a} vs ${b}`);
});

test('short words and base forms are left alone', () => {
  for (const w of [
    'bus',
    'gas',
    'yes',
    'bed',
    'red',
    'sing',
    'bring',
    'spring',
    'add',
    'fall',
    'need',
    'speed',
  ]) {
    assert.equal(stem(w), w);
  }
});

test('keywordTerms drops stop words and keeps names and numbers', () => {
  assert.deepEqual(keywordTerms('What did Caroline do in 2022 with her 3 kids?'), [
    'carolin',
    '2022',
    '3',
    'kid',
  ]);
  assert.deepEqual(keywordTerms('I went to the LGBTQ support group yesterday'), [
    'go',
    'lgbtq',
    'support',
    'group',
    'yesterday',
  ]);
});

test('possessives, contractions and hyphens', () => {
  assert.deepEqual(keywordTerms("Caroline's painting"), ['carolin', 'paint']);
  assert.deepEqual(keywordTerms('Caroline\u2019s painting'), ['carolin', 'paint']);
  assert.deepEqual(keywordTerms("I don't think it's the parents' fault"), ['think', 'parent', 'fault']);
  assert.deepEqual(keywordTerms("We'll see, I'd go, she'll stay, you're right"), [
    'see',
    'go',
    'stay',
    'right',
  ]);
  assert.deepEqual(keywordTerms("She was ill at the shed; O'Neill's rock'n'roll"), [
    'ill',
    'shed',
    'oneill',
    'rocknroll',
  ]);
  assert.deepEqual(keywordTerms('self-care and mother-in-law'), ['self', 'care', 'mother', 'law']);
});

test('numbers: times, ordinals, decades, decimals', () => {
  assert.deepEqual(keywordTerms('at 3pm'), ['3pm']);
  assert.deepEqual(keywordTerms('at 3 PM'), ['3pm']);
  assert.deepEqual(keywordTerms('on May 8th'), ['may', '8']);
  assert.deepEqual(keywordTerms('the 1990s'), ['1990']);
  assert.deepEqual(keywordTerms('3.5 stars, 1,000 people'), ['3.5', 'star', '1000', 'person']);
});

test('e-mail addresses are kept whole and also split', () => {
  assert.deepEqual(keywordTerms('mail John.Smith@Example.org'), [
    'mail',
    'john.smith@example.org',
    'john',
    'smith',
    'exampl',
    'org',
  ]);
});

test('accents are folded and non-Latin letters kept', () => {
  assert.deepEqual(keywordTerms('Café in Zürich'), ['cafe', 'zurich']);
  assert.deepEqual(keywordTerms('Москва 東京'), ['москва', '東京']);
});

test('queries and documents meet', () => {
  const doc = new Set(keywordTerms('Melanie: I painted a lovely sunrise over the lake last year.'));
  for (const t of keywordTerms('When did Melanie paint a sunrise?')) assert.ok(doc.has(t), t);
});

test('termFrequencies counts terms', () => {
  const tf = termFrequencies('Dogs and dogs: the dog barked at the other dog.');
  assert.equal(tf.get('dog'), 4);
  assert.equal(tf.get('bark'), 1);
  assert.equal(tf.has('the'), false);
});

test('empty and punctuation-only input', () => {
  assert.deepEqual(keywordTerms(''), []);
  assert.deepEqual(keywordTerms('?!... --- :)'), []);
});
