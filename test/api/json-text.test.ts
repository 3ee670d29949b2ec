/**
 * `jsonText` writes dates itself and must write exactly what `JSON.stringify` writes, for any
 * value: dates of any year (and invalid ones), inside plain objects, arrays, null-prototype
 * objects, boxed values, class instances and objects with their own `toJSON`, frozen or not;
 * and it must leave the body it is given as it was.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { jsonText } from '../../src/api/json-text.js';

const anyDate = fc.date({ noInvalidDate: false });

const anyBody = fc.anything({
  withDate: true,
  withNullPrototype: true,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withSparseArray: true,
  withObjectString: true,
  values: [anyDate, fc.string(), fc.double(), fc.constant(undefined), fc.constant(null)],
});

describe('jsonText', () => {
  test('writes what JSON.stringify writes, and changes nothing', () => {
    fc.assert(
      fc.property(anyBody, (body) => {
        const before = JSON.stringify(body);
        assert.equal(jsonText(body), before);
        assert.equal(JSON.stringify(body), before);
      }),
      { numRuns: 2000 },
    );
  });

  test('dates of every year, invalid ones, and around a millisecond', () => {
    fc.assert(
      fc.property(fc.array(anyDate, { maxLength: 20 }), (dates) => {
        assert.equal(
          jsonText({ dates, frozen: Object.freeze([...dates]) }),
          JSON.stringify({ dates, frozen: dates }),
        );
      }),
      { numRuns: 2000 },
    );
    const edges = [
      new Date(0),
      new Date(-1),
      new Date(Date.UTC(0, 0, 1)),
      new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
      new Date(Date.UTC(10000, 0, 1)),
      new Date(Date.UTC(-1, 11, 31, 23, 59, 59, 999)),
      new Date(Number.NaN),
      new Date(8.64e15),
      new Date(-8.64e15),
    ];
    edges[1]!.setUTCFullYear(5);
    assert.equal(jsonText(edges), JSON.stringify(edges));
  });

  test("a date whose JSON form is not Date's own, or an object with its own toJSON, is written by it", () => {
    const odd = new Date(0);
    Object.defineProperty(odd, 'toJSON', { value: () => 'odd' });
    const iso = new Date(1);
    Object.defineProperty(iso, 'toISOString', { value: () => 'iso' });
    const getters = new Date(2);
    Object.defineProperty(getters, 'getUTCFullYear', { value: () => 1234 });
    class Local extends Date {
      override toISOString() {
        return 'local';
      }
    }
    class Invalid extends Date {
      override valueOf() {
        return Number.NaN;
      }
    }
    const body = {
      odd,
      iso,
      getters,
      local: new Local(3),
      invalid: new Invalid(4),
      own: { toJSON: () => ({ at: new Date(5) }) },
      list: Object.assign([new Date(7)], { toJSON: () => 1 }),
    };
    assert.equal(jsonText(body), JSON.stringify(body));
  });

  test('an own __proto__ key holding a date stays a key', () => {
    const body = { b: 2 };
    Object.defineProperty(body, '__proto__', { value: new Date(9), enumerable: true });
    assert.equal(jsonText(body), JSON.stringify(body));
    assert.match(jsonText(body), /"__proto__":"1970/);
  });
});
