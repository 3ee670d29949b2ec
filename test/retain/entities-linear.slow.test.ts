/**
 * Entity resolution is linear (issue 18): resolving 2,000, 4,000 and 8,000 new names (one
 * large Retain) against a bank that knows 500, many sharing a first name (the hub case: every "Bob ..." is a
 * candidate of "Bob"), takes time that at most ~doubles with the names. The all-pairs code of
 * before took 1.2 s, 6.9 s and 21 s here (embedded); now 0.26, 0.24 and 0.40 s. It used to
 * compare every new name with every known one. Also checks the resolution still merges and
 * separates names as before at that scale.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveEntityNames } from '../../src/core/retain/entities.js';
import { assertLinear } from '../helpers/doubling.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

const FIRST = ['Bob', 'Ann', 'Carl', 'Dana', 'Eve', 'Finn', 'Gus', 'Hana'];
const SYLLABLES = 'ka lo mi nu pe ra si to vu wa xe yo za be co di'.split(' ');

/** A made-up surname, distinct for each n. */
function surname(n: number): string {
  let s = '';
  for (let i = 0; i < 4; i++, n = Math.floor(n / SYLLABLES.length)) s += SYLLABLES[n % SYLLABLES.length];
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Items of 100 entities each: full names over a few shared first names, and some one-word names. */
function items(from: number, count: number) {
  const out = [];
  for (let i = 0; i < count; i += 100) {
    const entities = [];
    for (let k = i; k < Math.min(i + 100, count); k++) {
      const n = from + k;
      const text = n % 10 === 0 ? surname(n) : `${FIRST[n % FIRST.length]} ${surname(n)}`;
      entities.push({ text, type: 'PERSON' });
    }
    out.push({ content: `Meeting ${from + i} of the group.`, entities });
  }
  return out;
}

for (const engine of ENGINES) {
  describe(`entity resolution at scale (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(async () => {
      await t.close();
    });
    const retain = async (bank: string, body: unknown) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };

    test('resolving new names takes time linear in their number', async () => {
      await retain('scale', { items: items(0, 500) });
      let next = 1_000_000;
      // Resolution alone (the store lookup and the matching), as Retain calls it: the rest of
      // a Retain is linear anyway and would hide a quadratic part.
      await assertLinear(
        `resolving new entities on ${engine}`,
        [2000, 4000, 8000],
        (n) => {
          next += 10_000;
          return items(next, n).flatMap((it) => it.entities.map((e) => e.text));
        },
        (names) => resolveEntityNames(t.services, 'default', 'scale', names),
        { runs: 2 },
      );
    });

    test('resolution at scale still merges a unique first name and keeps ambiguous ones apart', async () => {
      await retain('merge', { items: items(0, 1000) });
      // "Zed Kalomi" is the only Zed: "Zed" joins it. "Bob" has hundreds: it stays apart.
      await retain('merge', {
        items: [{ content: 'Zed Kalomi arrived.', entities: [{ text: 'Zed Kalomi', type: 'PERSON' }] }],
      });
      await retain('merge', {
        items: [
          {
            content: 'Zed and Bob talked.',
            entities: [
              { text: 'Zed', type: 'PERSON' },
              { text: 'Bob', type: 'PERSON' },
            ],
          },
        ],
      });
      const all: any[] = [];
      let cursor: string | undefined;
      do {
        const page = await t.call(
          'GET',
          bankPath('merge', `/entities?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        all.push(...page.body.items);
        cursor = page.body.next_cursor ?? undefined;
      } while (cursor);
      const zed = all.find((e) => e.name === 'Zed Kalomi');
      assert.deepEqual(zed.aliases, ['Zed']);
      assert.equal(zed.mention_count, 2);
      assert.ok(!all.some((e) => e.name === 'Zed'));
      assert.ok(
        all.some((e) => e.name === 'Bob'),
        'ambiguous "Bob" stays its own entity',
      );
      assert.equal(all.length, 1000 + 2);
    });
  });
}
