/**
 * What a cost budget saves: the heavy Retain (200 items × 100 new entities each) sent by a
 * project whose entity budget it exceeds is answered 429 before any work; the same Retain under
 * no budget does the work. Prints the time of each (embedded engine, and PostgreSQL when
 * MNEMO_TEST_DATABASE_URL is set).
 * Run: `npx tsx bench/budgets.ts [items, default 200] [pglite|postgres]`; each row is printed as soon as it is measured.
 */
import { type EngineName, ENGINES } from '../test/helpers/engines.js';
import { testApp } from '../test/helpers/app.js';

const ITEMS = Number(process.argv[2] ?? 200);
const ENTITIES = 100;

const body = (tag: string) => ({
  items: Array.from({ length: ITEMS }, (_, i) => ({
    content: `${tag} item ${i}: a note that mentions many people by name.`,
    entities: Array.from({ length: ENTITIES }, (_, j) => ({ text: `${tag} Person ${i}-${j}` })),
  })),
});

async function run(engine: EngineName) {
  const t = await testApp(engine);
  try {
    await t.call('POST', '/v1/default/projects', {
      body: { id: 'capped', name: 'c', limits: { entities_per_minute: 10_000 } },
    });
    await t.call('POST', '/v1/default/projects', {
      body: { id: 'free', name: 'f', limits: { entities_per_minute: null } },
    });
    const key = async (project: string) =>
      (
        await t.call('POST', `/v1/default/projects/${project}/keys`, {
          body: { name: 'k', scopes: ['retain'] },
        })
      ).body.key as string;
    const keyed = async (project: string, tag: string) => {
      const token = await key(project);
      const started = performance.now();
      const r = await t.call('POST', `/v1/me/banks/${tag}/memories`, { token, body: body(tag) });
      return { status: r.status, ms: Math.round(performance.now() - started) };
    };
    const row = (what: string, r: { status: number; ms: number }) =>
      console.log(`| ${engine} | ${what} | ${r.status} | ${r.ms} |`);
    row(`Retain ${ITEMS}×${ENTITIES} entities over the entity budget`, await keyed('capped', 'capped'));
    row('the same Retain without a budget', await keyed('free', 'free'));
  } finally {
    await t.close();
  }
}

console.log('| engine | what | status | ms |\n|---|---|---|---|');
for (const engine of ENGINES.filter((e) => !process.argv[3] || e === process.argv[3])) await run(engine);
