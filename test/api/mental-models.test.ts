/**
 * Mental models: CRUD and its refusals, refreshes without a model (extractive Reflect) run by
 * the worker, history, clear, a dry run that stores nothing, staleness after a Retain, the
 * automatic refresh after a consolidation, and keys: scopes on `/v1/me`, a key limited to some
 * banks refused on another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_MENTAL_MODELS } from '../../src/contract/mental-models.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const BANK = 'alice';
const mm = (rest = '', bank = BANK, base = '/v1/default') => bankPath(bank, `/mental-models${rest}`, base);

for (const engine of ENGINES) {
  describe(`mental models (${engine})`, () => {
    let t: TestApp;

    const done = async (bank: string, operationId: string) => {
      const op = await until(
        async () => (await t.call('GET', bankPath(bank, `/operations/${operationId}`))).body,
        (o) => o.status === 'completed' || o.status === 'failed',
      );
      assert.equal(op.status, 'completed', JSON.stringify(op));
    };
    const get = async (id: string, bank = BANK) => {
      const r = await t.call('GET', mm(`/${id}`, bank));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };
    const retain = async (bank: string, content: string) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items: [{ content }] } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };

    before(async () => {
      t = await testApp(engine, { runWorker: true });
      await retain(BANK, 'Alice is training for the Berlin marathon in September.');
      await retain(BANK, 'Alice runs forty kilometres a week with her club.');
    });
    after(() => t.close());

    test('create, get, list, update, delete; bad input is a 4xx with nothing stored', async () => {
      const made = await t.call('POST', mm(), {
        body: { id: 'training', name: 'Training', source_query: 'How is Alice training?', tags: ['fitness'] },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      assert.equal(made.body.mental_model_id, 'training');
      assert.match(made.body.operation_id, /^[0-9a-f-]{36}$/);
      assert.equal(made.body.mental_model.name, 'Training');
      assert.equal(made.body.mental_model.trigger.mode, 'full');
      await done(BANK, made.body.operation_id);

      const m = await get('training');
      assert.deepEqual(m.tags, ['fitness']);
      assert.equal(m.source_query, 'How is Alice training?');
      assert.equal((await get('training')).max_tokens, 2048);
      const meta = await t.call('GET', mm('/training?detail=metadata'));
      assert.equal(meta.body.source_query, undefined);
      assert.equal(meta.body.reflect_response, undefined);

      const list = await t.call('GET', mm());
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((x: any) => x.id),
        ['training'],
      );
      assert.equal(list.body.total, 1);
      const filtered = await t.call('GET', mm('?tags=other'));
      assert.equal(filtered.body.total, 0);

      const patched = await t.call('PATCH', mm('/training'), {
        body: { name: 'Running', source_query: null, trigger: { refresh_after_consolidation: true } },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.name, 'Running');
      assert.equal(patched.body.source_query, 'How is Alice training?');
      assert.equal(patched.body.trigger.refresh_after_consolidation, true);

      const refusals: [unknown, number, string][] = [
        [{ name: 'x' }, 400, 'validation_error'],
        [{ name: 'x', source_query: '   ' }, 400, 'validation_error'],
        [{ name: 'x', source_query: 'q', id: 'Not An Id' }, 400, 'validation_error'],
        [{ name: 'x', source_query: 'q', trigger: { mode: 'delta' } }, 400, 'validation_error'],
        [{ name: 'x', source_query: 'q', trigger: { refresh_cron: '0 3 * * *' } }, 400, 'validation_error'],
        [{ name: 'x', source_query: 'q', max_tokens: 0 }, 400, 'validation_error'],
        [{ name: 'x'.repeat(300), source_query: 'q' }, 400, 'validation_error'],
        [{ name: 'x', source_query: 'q', id: 'training' }, 409, 'conflict'],
      ];
      for (const [body, status, code] of refusals) {
        const r = await t.call('POST', mm(), { body });
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, code);
      }
      assert.equal((await t.call('GET', mm())).body.total, 1, 'nothing stored by a refusal');
      assert.equal((await t.call('GET', mm('/nope'))).status, 404);
      assert.equal((await t.call('GET', mm('', 'no-such-bank'))).status, 404);
      assert.equal((await t.call('PATCH', mm('/nope'), { body: { name: 'y' } })).status, 404);
      assert.equal((await t.call('POST', mm('/nope/refresh'))).status, 404);

      const gone = await t.call('DELETE', mm('/training'));
      assert.deepEqual(gone.body, { success: true, deleted: true, id: 'training' });
      assert.equal((await t.call('GET', mm('/training'))).status, 404);
      assert.equal((await t.call('DELETE', mm('/training'))).status, 404);
    });

    test('a bank holds a bounded number of models', async () => {
      const bank = 'full-bank';
      await retain(bank, 'Bob likes tea.');
      for (let i = 0; i < MAX_MENTAL_MODELS; i++) {
        const r = await t.call('POST', mm('', bank), {
          body: { id: `m${i}`, name: `m${i}`, source_query: 'tea?' },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const over = await t.call('POST', mm('', bank), { body: { name: 'one more', source_query: 'tea?' } });
      assert.equal(over.status, 409);
      assert.match(over.body.error.message, /already holds 50 mental models/);
      assert.equal((await t.call('GET', mm('?limit=10&offset=45', bank))).body.items.length, 5);
      // Deleting the bank removes its models.
      assert.equal((await t.call('DELETE', bankPath(bank))).status, 200);
      const left = await t.services.store.listMentalModels('default', bank, { limit: 100, offset: 0 });
      assert.equal(left.total, 0);
    });

    test('refresh without a model: extractive content, history, staleness after a Retain, clear', async () => {
      const made = await t.call('POST', mm(), {
        body: { id: 'marathon', name: 'Marathon', source_query: 'What is Alice training for?' },
      });
      await done(BANK, made.body.operation_id);
      const first = await get('marathon');
      assert.match(first.content, /Berlin marathon/);
      assert.equal(first.reflect_response.mode, 'extractive');
      assert.ok(first.reflect_response.based_on.memories.length > 0);
      assert.equal(first.is_stale, false);
      assert.equal(first.refresh_pending, false);
      assert.ok(first.last_refreshed_at);

      let history = (await t.call('GET', mm('/marathon/history'))).body;
      assert.equal(history.length, 1);
      assert.equal(history[0].previous_content, null);
      assert.equal(history[0].content, first.content);
      assert.equal(history[0].cause, 'refresh');

      await retain(BANK, 'Alice also plans to run the Boston marathon next April.');
      assert.equal((await get('marathon')).is_stale, true, 'stale after a Retain');

      const queued = await t.call('POST', mm('/marathon/refresh'));
      assert.equal(queued.status, 200, JSON.stringify(queued.body));
      assert.equal(queued.body.operation.kind, 'refresh_mental_model');
      await done(BANK, queued.body.operation_id);
      const second = await get('marathon');
      assert.match(second.content, /Boston/);
      assert.equal(second.is_stale, false);
      history = (await t.call('GET', mm('/marathon/history'))).body;
      assert.equal(history.length, 2);
      assert.equal(history[0].previous_content, first.content, 'newest first, with what it was before');
      assert.equal(history[0].content, second.content);

      const cleared = await t.call('POST', mm('/marathon/clear'));
      assert.equal(cleared.status, 200);
      assert.equal(cleared.body.content, null);
      assert.equal(cleared.body.is_stale, true);
      history = (await t.call('GET', mm('/marathon/history'))).body;
      assert.equal(history[0].cause, 'clear');
      assert.equal(history[0].previous_content, second.content);
    });

    test('forgetting a memory the content rests on drops the content and history, then refreshes', async () => {
      const bank = 'forgetful';
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          items: [
            { content: 'Erin hides the spare key under the blue flowerpot.' },
            { content: 'Erin likes jazz.' },
          ],
        },
      });
      const [secret] = r.body.memory_ids as string[];
      const made = await t.call('POST', mm('', bank), {
        body: { id: 'erin', name: 'Erin', source_query: 'Where does Erin hide the spare key?' },
      });
      await done(bank, made.body.operation_id);
      const again = await t.call('POST', mm('/erin/refresh', bank));
      await done(bank, again.body.operation_id);
      const before = await get('erin', bank);
      assert.match(before.content, /flowerpot/);
      assert.ok(before.reflect_response.based_on.memories.some((m: any) => m.id === secret));
      assert.equal((await t.call('GET', mm('/erin/history', bank))).body.length, 2);

      assert.equal((await t.call('DELETE', bankPath(bank, `/memories/${secret}`))).status, 200);
      const history = (await t.call('GET', mm('/erin/history', bank))).body as any[];
      assert.ok(
        history.every((h) => !/flowerpot/.test(`${h.previous_content} ${h.content}`)),
        'no past content quotes the forgotten memory',
      );
      const after = await until(
        () => get('erin', bank),
        (m) => !m.refresh_pending && m.content !== null,
      );
      assert.doesNotMatch(after.content, /flowerpot/);
      assert.ok(!after.reflect_response.based_on.memories.some((m: any) => m.id === secret));
    });

    test('a dry run shows the refresh and stores nothing', async () => {
      const made = await t.call('POST', mm(), {
        body: { id: 'club', name: 'Club', source_query: 'How far does Alice run each week?' },
      });
      await done(BANK, made.body.operation_id);
      const before = await get('club');
      await retain(BANK, 'Alice now runs sixty kilometres a week with her club.');
      const dry = await t.call('POST', mm('/club/dry-run-refresh'));
      assert.equal(dry.status, 200, JSON.stringify(dry.body));
      assert.equal(dry.body.mental_model_id, 'club');
      assert.equal(dry.body.current_content, before.content);
      assert.match(dry.body.preview_content, /sixty/);
      assert.match(dry.body.diff, /^\+.*sixty/m);
      assert.equal(dry.body.would_persist, true);
      assert.equal(dry.body.mode, 'extractive');
      assert.ok(dry.body.facts.used.world >= 1 || dry.body.facts.used.experience >= 1);
      const after = await get('club');
      assert.equal(after.content, before.content, 'content unchanged');
      assert.equal(after.last_refreshed_at, before.last_refreshed_at);
      assert.equal(after.is_stale, true);
      assert.equal((await t.call('GET', mm('/club/history'))).body.length, 1, 'no history entry');
    });

    test('without a model, a response_schema fails the refresh and says why', async () => {
      const made = await t.call('POST', mm(), {
        body: {
          id: 'shaped',
          name: 'Shaped',
          source_query: 'What is Alice training for?',
          trigger: { response_schema: { type: 'object', properties: { race: { type: 'string' } } } },
        },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      await done(BANK, made.body.operation_id);
      const m = (await t.call('GET', mm('/shaped'))).body;
      assert.equal(m.content, null);
      assert.equal(m.refresh_pending, false);
      assert.match(m.refresh_error, /language model/);
    });
    test('refresh_after_consolidation: a consolidation refreshes the stale model', async () => {
      const bank = 'auto';
      await retain(bank, 'Carol keeps bees in her garden.');
      const made = await t.call('POST', mm('', bank), {
        body: {
          id: 'bees',
          name: 'Bees',
          source_query: 'What does Carol keep?',
          trigger: { refresh_after_consolidation: true },
        },
      });
      await done(bank, made.body.operation_id);
      await until(
        async () => (await get('bees', bank)).is_stale,
        (stale) => !stale,
      );
      await retain(bank, 'Carol also keeps three goats.');
      // Retain queued a consolidation; when it ends it queues the refresh, which the worker runs.
      const refreshed = await until(
        () => get('bees', bank),
        (m) => !m.is_stale && /goats/.test(m.content ?? ''),
        30_000,
      );
      assert.match(refreshed.content, /goats/);
      const ops = (await t.call('GET', bankPath(bank, '/operations?type=refresh_mental_model'))).body;
      assert.ok(ops.items.length >= 2, 'the create and the consolidation each queued a refresh');
    });

    test('scopes on /v1/me; a key limited to some banks is refused on another', async () => {
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'p2', name: 'P' } })).status,
        201,
      );
      const mint = async (scopes: string[], banks?: string[]) =>
        (await t.call('POST', '/v1/default/projects/p2/keys', { body: { name: 'k', scopes, banks } })).body
          .key as string;
      const admin = await mint(['admin', 'recall', 'retain']);
      const reader = await mint(['recall']);
      const scoped = await mint(['admin', 'recall', 'retain'], ['mine']);
      for (const bank of ['mine', 'theirs']) {
        const r = await t.call('POST', bankPath(bank, '/memories', '/v1/me'), {
          token: admin,
          body: { items: [{ content: `Dana waters the ${bank} plants.` }] },
        });
        assert.equal(r.status, 200);
        const c = await t.call('POST', mm('', bank, '/v1/me'), {
          token: admin,
          body: { id: 'plants', name: 'Plants', source_query: 'Who waters the plants?' },
        });
        assert.equal(c.status, 200, JSON.stringify(c.body));
      }
      assert.equal((await t.call('GET', mm('', 'mine', '/v1/me'), { token: reader })).status, 200);
      const denied = await t.call('POST', mm('', 'mine', '/v1/me'), {
        token: reader,
        body: { name: 'x', source_query: 'y' },
      });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.required_scope, 'admin');
      assert.equal(
        (await t.call('POST', mm('/plants/refresh', 'mine', '/v1/me'), { token: reader })).status,
        403,
      );

      assert.equal((await t.call('GET', mm('/plants', 'mine', '/v1/me'), { token: scoped })).status, 200);
      for (const [method, rest] of [
        ['GET', ''],
        ['GET', '/plants'],
        ['GET', '/plants/history'],
        ['POST', '/plants/refresh'],
        ['POST', '/plants/dry-run-refresh'],
        ['POST', '/plants/clear'],
        ['DELETE', '/plants'],
      ] as const) {
        const r = await t.call(method, mm(rest, 'theirs', '/v1/me'), { token: scoped });
        assert.equal(r.status, 404, `${method} ${rest}: ${JSON.stringify(r.body)}`);
      }
      assert.equal((await t.call('GET', mm('/plants', 'theirs', '/v1/me'), { token: admin })).status, 200);
    });
  });
}
