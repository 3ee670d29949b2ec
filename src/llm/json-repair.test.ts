import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseLaxJson } from './json-repair.js';

describe('parseLaxJson', () => {
  const cases: Array<[string, string, unknown]> = [
    ['strict JSON', '{"a": [1, 2.5, "x"], "b": null}', { a: [1, 2.5, 'x'], b: null }],
    ['a bare scalar', '42', 42],
    ['a ```json fence with prose around it', 'Sure!\n```json\n{"a": 1}\n```\nAnything else?', { a: 1 }],
    ['an unclosed fence', '```json\n{"a": 1}', { a: 1 }],
    ['leading and trailing prose', 'The answer is {"a": 1} as requested.', { a: 1 }],
    ['trailing commas', '{"a": [1, 2,], "b": {"c": 3,},}', { a: [1, 2], b: { c: 3 } }],
    ['single quotes', `{'a': 'it\\'s "fine"'}`, { a: 'it\'s "fine"' }],
    ['unquoted keys', '{name: "Alice", age_2: 30, $id: 1}', { name: 'Alice', age_2: 30, $id: 1 }],
    ['Python literals', "{'ok': True, 'bad': False, 'none': None}", { ok: true, bad: false, none: null }],
    ['comments', '{"a": 1, // first\n /* second */ "b": 2}', { a: 1, b: 2 }],
    ['missing commas between items', '[{"a": 1}\n{"a": 2}]', [{ a: 1 }, { a: 2 }]],
    ['raw newlines and tabs in strings', '{"t": "one\ntwo\tthree"}', { t: 'one\ntwo\tthree' }],
    ['an escape JSON does not know', '{"path": "C:\\dir\\x"}', { path: 'C:\\dir\\x' }],
    ['numbers JSON does not allow', '{"a": .5, "b": 1., "c": 007}', { a: 0.5, b: 1, c: 7 }],
    ['a missing closer', '{"a": [1, 2}', { a: [1, 2] }],
    ['a stray closer after the value', '{"a": 1}} and then some', { a: 1 }],
    ['the answer over a bracket in prose', 'See [1] and [2]. Result: {"a": 1, "b": 2}', { a: 1, b: 2 }],
    ['a brace in prose before the answer', 'Use {name} as key: {"name": "x"}', { name: 'x' }],
  ];
  for (const [name, text, expected] of cases) {
    test(name, () => assert.deepEqual(parseLaxJson(text), expected));
  }

  const truncated: Array<[string, string, unknown]> = [
    [
      'inside a string value',
      '{"facts": [{"text": "Alice likes tea"}, {"text": "Bob li',
      {
        facts: [{ text: 'Alice likes tea' }, { text: 'Bob li' }],
      },
    ],
    ['after a comma', '{"a": 1, "b": [true,', { a: 1, b: [true] }],
    ['inside a key', '{"a": 1, "b', { a: 1 }],
    ['after a colon', '{"a": 1, "b":', { a: 1 }],
    ['inside a keyword', '{"a": {"b": [1, 2, tr', { a: { b: [1, 2] } }],
    ['right after an escape', '["x\\', ['x']],
    ['after a minus sign', '[1, -', [1]],
    ['inside a fence', '```json\n{"a": [1, 2', { a: [1, 2] }],
  ];
  for (const [name, text, expected] of truncated) {
    test(`truncated ${name}`, () => assert.deepEqual(parseLaxJson(text), expected));
  }

  for (const hopeless of ['', 'I cannot help with that.', '[see below]', '{"a": maybe}', '{"a" 1}']) {
    test(`hopeless: ${JSON.stringify(hopeless)}`, () => {
      assert.throws(() => parseLaxJson(hopeless), { name: 'LlmError', kind: 'bad_response' });
    });
  }

  test('gives up quickly on long output full of brackets', () => {
    const started = Date.now();
    assert.throws(() => parseLaxJson('[x] '.repeat(20_000)), { kind: 'bad_response' });
    assert.ok(Date.now() - started < 1_000);
  });
});
