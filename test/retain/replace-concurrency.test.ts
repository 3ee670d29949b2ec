import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

for (const engine of ENGINES) {
  describe(`document replace under concurrent recall (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const LAST = 12;
    const version = (v: number) => ({
      document_id: 'plan',
      items: [0, 1, 2].map((i) => ({ content: `travel plan version ${v} part ${i} visiting lisbon` })),
    });

    test('a recall sees the old set or the new set, never a mix or nothing', async () => {
      const bank = 'replace-race';
      assert.equal((await t.call('POST', bankPath(bank, '/memories'), { body: version(0) })).status, 200);
      for (let v = 1; v <= LAST; v++) {
        const recalls = Array.from({ length: 16 }, () =>
          t.call('POST', bankPath(bank, '/memories/recall'), { body: { query: 'travel plan lisbon' } }),
        );
        const replace = t.call('POST', bankPath(bank, '/memories'), { body: version(v) });
        const [r, ...seen] = await Promise.all([replace, ...recalls]);
        assert.equal(r.status, 200);
        for (const res of seen) {
          const versions = new Set(
            res.body.results
              .map((x: any) => /version (\d+)/.exec(x.text)?.[1])
              .filter((x: unknown) => x !== undefined),
          );
          assert.equal(res.body.results.length, 3, `a recall saw ${res.body.results.length} memories`);
          assert.equal(versions.size, 1, `a recall saw a mix of versions ${[...versions].join(',')}`);
        }
      }
      const final = await t.call('GET', bankPath(bank, '/memories'));
      assert.deepEqual(
        new Set(final.body.items.map((x: any) => /version (\d+)/.exec(x.text)![1])),
        new Set([String(LAST)]),
      );
    });
  });
}
