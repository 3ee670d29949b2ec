import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractEntities, queryEntityCandidates, speakerOf } from './entities.js';

const names = (text: string): string[] => extractEntities(text).map((e) => `${e.text}/${e.type}`);

test('speaker, people, places and organisations in a chat line', () => {
  assert.deepEqual(names('Caroline: I went to the LGBTQ support group in Boston yesterday with Melanie.'), [
    'Caroline/PERSON',
    'LGBTQ/ORGANIZATION',
    'Boston/PLACE',
    'Melanie/PERSON',
  ]);
});

test('possessives are removed and honorifics kept', () => {
  assert.deepEqual(
    names("Melanie: That's great! Caroline's painting is amazing. Did you see Dr. Smith at Google?"),
    ['Melanie/PERSON', 'Caroline/PERSON', 'Dr. Smith/PERSON', 'Google/ORGANIZATION'],
  );
});

test('multi-word names, with "of" inside', () => {
  assert.deepEqual(names('Yesterday I met John Smith at the Museum of Modern Art in New York City.'), [
    'John Smith/PERSON',
    'Museum of Modern Art/PLACE',
    'New York City/PLACE',
  ]);
  assert.deepEqual(
    names('I work at the University of Washington and my sister lives in San Francisco, California.'),
    ['University of Washington/ORGANIZATION', 'San Francisco/PLACE', 'California/PLACE'],
  );
});

test('head words type names the tagger does not know', () => {
  assert.deepEqual(names('She studies at Stanford University and swims in Lake Tahoe on weekends.'), [
    'Stanford University/ORGANIZATION',
    'Lake Tahoe/PLACE',
  ]);
  assert.deepEqual(names('My friend from the Rainbow Youth Club called.'), [
    'Rainbow Youth Club/ORGANIZATION',
  ]);
});

test('sentence-initial common words are not names', () => {
  assert.deepEqual(names('Yesterday I went out. The weather was nice. Thanks, Jon! Sounds great.'), [
    'Jon/PERSON',
  ]);
  assert.deepEqual(names('Hey Mel! Good to see you! How have you been?'), ['Mel/PERSON']);
  assert.deepEqual(names('I LOVE THIS SO MUCH!!! Thanks Caroline'), ['Caroline/PERSON']);
});

test('titles, unknown proper names and explicit dates', () => {
  assert.deepEqual(names('Joanna and Nate watched "The Lord of the Rings" at AMC on 8 May 2023.'), [
    'Joanna/PERSON',
    'Nate/PERSON',
    'Lord of the Rings/OTHER',
    'AMC/ORGANIZATION',
    '8 May 2023/DATE',
  ]);
  // Relative dates are not entities: they mean nothing without the time they were said.
  assert.deepEqual(names('Gina lost her job at Door Dash this month, in January 2023.'), [
    'Gina/PERSON',
    'Door Dash/OTHER',
    'January 2023/DATE',
  ]);
});

test('each entity once, case-insensitively', () => {
  assert.deepEqual(names('Jon: Gina, Gina! Did GINA call Jon?'), ['Jon/PERSON', 'Gina/PERSON']);
});

test('lines without entities, and empty text', () => {
  assert.deepEqual(extractEntities('i went home and slept.'), []);
  assert.deepEqual(extractEntities(''), []);
});

test('queryEntityCandidates finds names in questions, lower-case ones too', () => {
  assert.deepEqual(queryEntityCandidates('When did Melanie paint a sunrise?'), ['Melanie']);
  assert.deepEqual(queryEntityCandidates("Who is Gina's friend?"), ['Gina']);
  assert.deepEqual(queryEntityCandidates('Where did Jon go after Rome in June 2023?'), ['Jon', 'Rome']);
  assert.deepEqual(queryEntityCandidates('what did caroline do in boston?'), ['caroline', 'boston']);
  assert.deepEqual(queryEntityCandidates('What did I do yesterday?'), []);
});

test('speakerOf reads the speaker label of a transcript line', () => {
  assert.equal(speakerOf('Caroline: I went to the support group.'), 'Caroline');
  assert.equal(speakerOf('Dr. Smith: take two a day'), 'Dr. Smith');
  assert.equal(speakerOf('Note: buy milk'), null);
  assert.equal(speakerOf('I went to the support group: it was great.'), null);
});
