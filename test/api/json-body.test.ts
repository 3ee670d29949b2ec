/**
 * `readJsonBody` reads a body in turns of the event loop and must answer exactly as the checks
 * it replaced did, one whole-body pass each (kept below as the oracle), followed by JSON.parse:
 * the same value, the same refusal, malformed exactly when JSON.parse throws. Checked on a corpus
 * and on fuzzed bodies (valid ones, and valid ones with characters cut, doubled or swapped), with
 * pieces of a few characters so that every body is read in many pieces. And it gives turns: at
 * least one per SCAN_SLICE characters of a 10 MB body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  DEPTH_REFUSED,
  ELEMENTS_REFUSED,
  LONE_SURROGATE_REFUSED,
  MAX_JSON_DEPTH,
  MAX_JSON_ELEMENTS,
  MAX_JSON_MEMBERS,
  MEMBERS_REFUSED,
  NUL_REFUSED,
  PROTO_REFUSED,
} from '../../src/api/body-text.js';
import { bodyText, DECODE_SLICE, readJsonBody, SCAN_SLICE } from '../../src/api/json-body.js';

// The checks as they were (src/api/body-text.ts before json-body.ts), whole-body passes each.
const NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/i;
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
  }
  return false;
}
function jsonDepth(body: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}
function hasProtoMember(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasProtoMember);
  if (value && typeof value === 'object') {
    return Object.hasOwn(value, '__proto__') || Object.values(value).some(hasProtoMember);
  }
  return false;
}
/** What the old checks and JSON.parse made of a body. */
function oracle(body: string) {
  if (jsonDepth(body) > MAX_JSON_DEPTH) return { ok: false, refused: DEPTH_REFUSED };
  if (NUL_ESCAPE.test(body)) return { ok: false, refused: NUL_REFUSED };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, malformed: true };
  }
  if (hasProtoMember(value)) return { ok: false, refused: PROTO_REFUSED };
  if (SURROGATE_ESCAPE.test(body) && hasLoneSurrogate(value))
    return { ok: false, refused: LONE_SURROGATE_REFUSED };
  return { ok: true, value };
}

const now = async () => {};

async function same(body: string, piece?: number) {
  const got = await readJsonBody(body, { turn: now, ...(piece && { batch: piece }) });
  assert.deepStrictEqual(
    got,
    oracle(body),
    `body ${JSON.stringify(body.slice(0, 300))} (pieces of ${piece})`,
  );
}

const CORPUS = [
  '',
  ' ',
  '{}',
  '[]',
  '1',
  ' "x" ',
  'null',
  '{"a":1,"b":[1,2,{"c":"d"}],"e":null,"f":true,"g":-1.5e3}',
  '{"a":1,"a":2,"b":3,"a":4}',
  '{"2":1,"1":2,"b":3}',
  '[1,]',
  '[,1]',
  '{"a":1,}',
  '{"a" 1}',
  '{"a":}',
  '{1:2}',
  '[1 2]',
  '[1] [2]',
  '{"a":1}}',
  '[[1]',
  '["a\\"b", "c\\\\", "\\u00e9\\n"]',
  '["\\u0000"]',
  '["\\\\u0000"]',
  '["\\\\\\u0000"]',
  '\\u0000',
  '["\\U0000"]',
  '{"__proto__":1}',
  '{"a":[{"__proto__":{}}]}',
  '{"\\u005f_proto__":1}',
  '{"__proto_":1}',
  '{"__proto__":1',
  '["\\ud800"]',
  '["\\udc00"]',
  '["\\ud83d\\ude00"]',
  '["\\ud83d\\u0041"]',
  '["\\ud83dx"]',
  '{"\\ud800":1}',
  '["\ud83d\ude00"]',
  '["\\ud83d\ude00"]',
  '["\\uD8zz"]',
  '["\\uD8"]',
  '"\t"',
  '["a\u0001"]',
  '[tru]',
  '[1e5, 0.5, -0, 1E+2]',
  '[01]',
  '[1.]',
  '\u00a0[]',
  '[]\n\r\t ',
  `${'['.repeat(64)}${']'.repeat(64)}`,
  `${'['.repeat(65)}${']'.repeat(65)}`,
  `${'['.repeat(65)}`,
  `["${'['.repeat(100)}"]`,
  `{"a":"${'x'.repeat(300)}\\u00e9${'y'.repeat(300)}", "${'k'.repeat(200)}": [${'1,'.repeat(200)}2]}`,
];

describe('readJsonBody', () => {
  test('answers as the whole-body checks and JSON.parse did, on a corpus', async () => {
    for (const body of CORPUS) for (const piece of [undefined, 1, 2, 3, 7, 16]) await same(body, piece);
  });

  const json = fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v, null, Math.random() < 0.3 ? 1 : 0));
  const tricky = fc.constantFrom(
    '"',
    '\\',
    '\\u0000',
    '\\ud800',
    '\\udc00',
    '__proto__',
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    ' ',
    'é',
    '\ud83d',
  );

  test('answers as they did on fuzzed bodies, in pieces of any size', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.integer({ min: 1, max: 40 }), async (body, piece) => same(body, piece)),
      { numRuns: 400 },
    );
  });

  test('answers as they did on fuzzed bodies with characters cut, inserted or doubled', async () => {
    await fc.assert(
      fc.asyncProperty(
        json,
        fc.array(fc.tuple(fc.nat(), fc.nat(3), tricky), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 24 }),
        async (body, edits, piece) => {
          let b = body;
          for (const [at, cut, insert] of edits) {
            const p = at % (b.length + 1);
            b = b.slice(0, p) + insert + b.slice(p + cut);
          }
          await same(b, piece);
        },
      ),
      { numRuns: 600 },
    );
  });

  test(`gives a turn at least every ${SCAN_SLICE} characters of a 10 MB body, and parses it as JSON.parse does`, async () => {
    const item = (i: number) => ({
      content: `note ${i} `.repeat(40),
      entities: Array.from({ length: 50 }, (_, j) => ({ text: `Person ${i} ${j}`, type: 'PERSON' })),
    });
    const body = JSON.stringify({
      items: Array.from({ length: 3000 }, (_, i) => item(i)),
      s: 'x'.repeat(4e6),
    });
    assert.ok(body.length > 10e6);
    let turns = 0;
    const got = await readJsonBody(body, {
      turn: async () => {
        turns++;
      },
    });
    assert.deepStrictEqual(got, { ok: true, value: JSON.parse(body) });
    // Scanned once, then parsed: at least one turn per slice of the scan.
    assert.ok(turns >= Math.floor(body.length / SCAN_SLICE), `${turns} turns`);
  });

  test(`refuses an object of more than ${MAX_JSON_MEMBERS} members or an array of more than ${MAX_JSON_ELEMENTS} elements, anywhere`, async () => {
    const object = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    const array = (n: number) => `[${'0,'.repeat(n - 1)}0]`;
    const inItem = (v: string) => `{"items":[{"content":"x","metadata":{"a":[1,${v}]}}]}`;
    for (const [body, refused] of [
      [object(MAX_JSON_MEMBERS + 1), MEMBERS_REFUSED],
      [inItem(object(MAX_JSON_MEMBERS + 1)), MEMBERS_REFUSED],
      [array(MAX_JSON_ELEMENTS + 1), ELEMENTS_REFUSED],
      [inItem(array(MAX_JSON_ELEMENTS + 1)), ELEMENTS_REFUSED],
      // Refused as soon as the scan meets it, like the depth: before a malformed end.
      [`${inItem(object(MAX_JSON_MEMBERS + 1))}}`, MEMBERS_REFUSED],
    ] as const) {
      assert.deepStrictEqual(
        await readJsonBody(body, { turn: now }),
        { ok: false, refused },
        body.slice(0, 80),
      );
    }
    for (const body of [object(MAX_JSON_MEMBERS), inItem(array(MAX_JSON_ELEMENTS - 1))]) {
      assert.deepStrictEqual(await readJsonBody(body, { turn: now }), { ok: true, value: JSON.parse(body) });
    }
  });

  test(`decodes a body's bytes as Request.text() does, a turn every ${DECODE_SLICE} bytes`, async () => {
    // Multi-byte characters cut by every slice boundary, a byte order mark, invalid bytes.
    const text = `\ufeff{"s":"${'é€😀a'.repeat(300_000)}"}`;
    const bytes = Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xc3])]);
    const req = () => new Request('http://x/', { method: 'POST', body: bytes });
    let turns = 0;
    const got = await bodyText(req(), {
      turn: async () => {
        turns++;
      },
    });
    assert.equal(got, await req().text());
    assert.equal(turns, Math.ceil(bytes.length / DECODE_SLICE) - 1);
    for (const slice of [1, 2, 3, 5, 7]) {
      const small = Buffer.from('\ufeffaé€😀\ud800'.repeat(3));
      const r = () => new Request('http://x/', { method: 'POST', body: small });
      assert.equal(await bodyText(r(), { turn: now, slice }), await r().text());
    }
  });
});
