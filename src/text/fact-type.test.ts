import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyFactType, FACT_TYPES, type FactType } from './fact-type.js';

test('FACT_TYPES lists the eight types in order', () => {
  assert.deepEqual(
    [...FACT_TYPES],
    ['world', 'experience', 'observation', 'procedure', 'reasoning', 'preference', 'correction', 'profile'],
  );
});

const cases: [string, FactType][] = [
  // preference
  ['I love hiking in the mountains.', 'preference'],
  ['Melanie: I really like pottery, it calms me down.', 'preference'],
  ['I prefer tea over coffee.', 'preference'],
  ["I can't stand loud music.", 'preference'],
  ['My favorite book is "Charlotte\'s Web".', 'preference'],
  ['Caroline loves painting sunsets.', 'preference'],
  ["I'd rather stay home tonight.", 'preference'],
  // procedure
  ['How to reset the router: unplug it for ten seconds.', 'procedure'],
  ['First, preheat the oven, then add the flour.', 'procedure'],
  ['To deploy the app, run npm run build and copy the folder.', 'procedure'],
  ['Step 1: open the settings page.', 'procedure'],
  ['Make sure to water the plants twice a week.', 'procedure'],
  // correction
  ['Actually, I moved to Berlin, not Munich.', 'correction'],
  ['Correction: the meeting is on Tuesday.', 'correction'],
  ['I was wrong about the date of the concert.', 'correction'],
  ['My name is Jon, not John.', 'correction'],
  ['The party is not Friday but Saturday.', 'correction'],
  ['I no longer work at the bank.', 'correction'],
  // profile
  ['My name is Caroline.', 'profile'],
  ["I'm a software engineer.", 'profile'],
  ['I live in Boston with my two cats.', 'profile'],
  ['I am 32 years old.', 'profile'],
  ['I work as a nurse at the city hospital.', 'profile'],
  ['I have two kids and a dog.', 'profile'],
  ['Gina lives in Chicago.', 'profile'],
  // experience
  ['Caroline: I went to the LGBTQ support group yesterday.', 'experience'],
  ['We visited the Grand Canyon last summer.', 'experience'],
  ['Yesterday I finally finished my first marathon.', 'experience'],
  ['I painted a sunrise over the lake.', 'experience'],
  ["I've been to Paris twice.", 'experience'],
  ['I went home early because I was tired.', 'experience'],
  // reasoning
  ['The roads are icy, therefore the school is closed.', 'reasoning'],
  ['She missed the bus because her alarm did not ring.', 'reasoning'],
  ['So I think the project will be late.', 'reasoning'],
  ['That means the deadline has to move.', 'reasoning'],
  // observation
  ['Jon usually practises dance in the evening.', 'observation'],
  ['The team tends to ship on Fridays.', 'observation'],
  ['She always brings cookies to the meetings.', 'observation'],
  ['Every morning he walks the dog.', 'observation'],
  // world
  ['Paris is the capital of France.', 'world'],
  ['The LGBTQ support group meets at the community center.', 'world'],
  ['Water boils at 100 degrees Celsius at sea level.', 'world'],
  ['', 'world'],
];

test('classifyFactType by cue phrases', () => {
  const wrong = cases
    .map(([text, expected]) => ({ text, expected, got: classifyFactType(text) }))
    .filter((c) => c.got !== c.expected);
  assert.deepEqual(wrong, []);
});

test('first-person words that only look past-tense are not experiences', () => {
  assert.equal(classifyFactType('I need a new laptop.'), 'world');
});
