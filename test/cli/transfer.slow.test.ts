import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Memory, Mnemo, type RetainItem } from '../../packages/client/src/index.js';
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from '../../packages/client/test/live-server.js';
import { ENGINES } from '../helpers/engines.js';
import { isConsolidatedObservation } from '../../src/cli/client/bank-file.js';
import { finished, runCli, spawnCli } from './cli.js';

const SOURCE = 'source@example.com';
/** Enough for every optional field, several documents, an export resumed after 100 memories, 12 import batches. */
const TOTAL = 120;
const BATCH = 10;
const BATCHES = TOTAL / BATCH;
const PEOPLE = ['Alice Moreau', 'Bruno Silva', 'Chen Wei', 'Dana Kowalski', 'Émile Zola'];
const CITIES = ['Lisbon', 'Kraków', 'Osaka', 'Nairobi'];
const TYPES = ['world', 'experience', 'preference', 'profile'] as const;

/** A varied item: every optional field shows up, documents span many Retain calls. */
function item(i: number): RetainItem {
  const who = PEOPLE[i % PEOPLE.length]!;
  const where = CITIES[i % CITIES.length]!;
  return {
    content: `Memory ${i}: ${who} met a friend in ${where} and talked about project ${i % 17} — naïve café ☕.`,
    fact_type: TYPES[i % TYPES.length],
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
    ...(i % 3 === 0 ? { tags: ['travel', `t${i % 4}`] } : {}),
    ...(i % 5 === 0 ? { metadata: { turn: i, source: { kind: 'chat', n: [i, i + 1] } } } : {}),
    ...(i % 7 === 0 ? { context: `conversation ${Math.floor(i / 7)}` } : {}),
    ...(i % 4 === 0 ? { entities: [{ text: where, type: 'PLACE' }] } : {}),
    ...(i % 10 === 1 ? { document_id: 'journal', update_mode: 'append' as const } : {}),
    ...(i % 50 === 2 ? { document_id: `letter-${Math.floor(i / 50)}` } : {}),
  };
}

/** Every field Retain reproduces: ids, created_at and chunk ids are the new bank's own. */
const comparable = (m: Memory) => ({
  text: m.text,
  type: m.type,
  context: m.context,
  mentioned_at: m.mentioned_at,
  occurred_start: m.occurred_start,
  occurred_end: m.occurred_end,
  tags: m.tags,
  metadata: m.metadata,
  entities: [...m.entities].sort(),
  document_id: m.document_id,
});

const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
const withoutTime = (rows: Record<string, any>[]) => rows.map(({ exported_at: _t, ...r }) => r);

/** The bank's memories without consolidation's observations (derived, made again by the new bank). */
async function retained(sdk: Mnemo, bank: string): Promise<Memory[]> {
  return (await sdk.memories.list(bank, { limit: 500 }).toArray()).filter(
    (m) => !isConsolidatedObservation(m),
  );
}

/** Waits until the bank has no consolidation queued or running. */
async function settled(sdk: Mnemo, bank: string): Promise<void> {
  await waitFor(async () => {
    const busy = await sdk.operations.list(bank, { limit: 500 }).toArray();
    return busy.some((o) => o.status === 'pending' || o.status === 'processing') ? undefined : true;
  }, `operations of ${bank}`);
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, ms = 240_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const engine of ENGINES) {
  describe(`mnemo export and import (${engine})`, () => {
    let server: LiveServer;
    let sdk: Mnemo;
    let env: Record<string, string>;
    let dir: string;
    let exported: string;

    before(async () => {
      server = await startLiveServer(engine);
      sdk = new Mnemo({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
      env = { MNEMO_URL: server.url, MNEMO_ADMIN_TOKEN: ADMIN_TOKEN };
      dir = await mkdtemp(join(tmpdir(), 'mnemo-transfer-'));
      exported = join(dir, 'source.jsonl');
      await sdk.banks.upsert(SOURCE, { name: 'Source', mission: 'Remember travels.' });
      await sdk.banks.config.update(SOURCE, {
        disposition_empathy: 4,
        retain_auto_entities: true,
        recall_default_budget: 'high',
      });
      await sdk.directives.create(SOURCE, {
        name: 'tone',
        text: 'Answer warmly.',
        priority: 3,
        tags: ['style'],
      });
      for (let start = 0; start < TOTAL; start += 60) {
        const items = Array.from({ length: 60 }, (_, k) => item(start + k));
        await sdk.memories.retain(SOURCE, { items });
      }
      await settled(sdk, SOURCE);
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    test('export writes the whole bank as JSONL, the same to a file and to stdout', async () => {
      const toFile = await runCli(['export', '--bank', SOURCE, '-o', exported], env);
      assert.equal(toFile.code, 0, toFile.stderr);
      assert.match(
        toFile.stderr,
        new RegExp(`exported ${TOTAL} memories, \\d+ entities, 4 documents, 1 directives`),
      );
      assert.match(toFile.stderr, /^export \d+\/\d+ \(100%/m);
      const rows = lines(await readFile(exported, 'utf8'));
      assert.equal(rows[0]!.kind, 'header');
      assert.equal(rows[0]!.bank, SOURCE);
      const bank = rows.find((r) => r.kind === 'bank')!;
      assert.equal(bank.name, 'Source');
      assert.deepEqual(bank.config, {
        disposition_empathy: 4,
        retain_auto_entities: true,
        recall_default_budget: 'high',
      });
      assert.deepEqual(
        rows.filter((r) => r.kind === 'directive').map((d) => [d.name, d.text, d.priority]),
        [['tone', 'Answer warmly.', 3]],
      );
      const memories = rows.filter((r) => r.kind === 'memory');
      assert.equal(memories.length, TOTAL);
      assert.ok(memories[0]!.text.startsWith('Memory 0:'), 'oldest first');
      assert.ok(memories.at(-1)!.text.startsWith(`Memory ${TOTAL - 1}:`));
      const m20 = memories[20]!;
      assert.deepEqual(m20.metadata, { turn: 20, source: { kind: 'chat', n: [20, 21] } });
      assert.ok(
        m20.entities.some((e: { text: string; type: string }) => e.text === 'Lisbon' && e.type === 'PLACE'),
      );
      assert.equal(
        rows.filter((r) => r.kind === 'document').find((d) => d.id === 'journal')?.memory_count,
        TOTAL / 10,
      );
      assert.deepEqual(rows.at(-1), {
        kind: 'end',
        memories: TOTAL,
        entities: rows.filter((r) => r.kind === 'entity').length,
        documents: 4,
        directives: 1,
      });
      assert.equal(existsSync(`${exported}.partial`) || existsSync(`${exported}.progress.json`), false);

      const toStdout = await runCli(['export', '--bank', SOURCE], env);
      assert.equal(toStdout.code, 0, toStdout.stderr);
      assert.deepEqual(withoutTime(lines(toStdout.stdout)), withoutTime(rows));
    });

    test('an interrupted export to a file carries on from its last page', async () => {
      const out = join(dir, 'resumed.jsonl');
      const first = await sdk.memories.list(SOURCE, { limit: 100 });
      const pageText = first.items.map((m) => `${JSON.stringify(m)}\n`).join('');
      // A page written in full, then half a line of the next one when the process died.
      await writeFile(`${out}.partial`, `${pageText}{"id":"half a li`);
      await writeFile(
        `${out}.progress.json`,
        JSON.stringify({
          bank: SOURCE,
          cursor: first.next_cursor,
          memories: 100,
          bytes: Buffer.byteLength(pageText),
          done: false,
        }),
      );
      const r = await runCli(['export', '--bank', SOURCE, '-o', out], env);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /resuming the export of source@example\.com after 100 memories/);
      assert.deepEqual(
        withoutTime(lines(await readFile(out, 'utf8'))),
        withoutTime(lines(await readFile(exported, 'utf8'))),
      );
    });

    test('import shows progress, survives SIGKILL, resumes without duplicates and reproduces the bank', async () => {
      const target = 'copy@example.com';
      const progressFile = `${exported}.progress.json`;
      const args = ['import', exported, '--bank', target, '--batch-size', String(BATCH)];
      const child = spawnCli(args, env);
      const done = finished(child);
      const atKill = await waitFor(async () => {
        const state = existsSync(progressFile)
          ? JSON.parse(await readFile(progressFile, 'utf8').catch(() => '{}'))
          : {};
        return state.next_batch >= 3 ? state : undefined;
      }, 'three acknowledged batches');
      child.kill('SIGKILL');
      const killed = await done;
      assert.equal(killed.code, null, `the import ended by itself: ${killed.stderr}`);
      const state = JSON.parse(await readFile(progressFile, 'utf8'));
      assert.ok(state.next_batch >= atKill.next_batch && state.next_batch < state.batches, 'stopped mid-way');
      const partial = (await retained(sdk, target)).length;
      assert.ok(
        partial === state.items_done || (state.in_flight && partial === state.items_done + BATCH),
        `${partial} memories after ${state.items_done} acknowledged items`,
      );

      const resumed = await runCli(args, env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(
        resumed.stderr,
        new RegExp(`resuming: ${state.next_batch} of ${BATCHES} batches were stored before`),
      );
      assert.match(resumed.stderr, new RegExp(`^import \\d+/${TOTAL} \\(\\d+%, \\d+/s`, 'm'));
      assert.match(
        resumed.stderr,
        new RegExp(`imported ${TOTAL} items into copy@example\\.com in ${BATCHES} batches`),
      );

      const src = await retained(sdk, SOURCE);
      const dst = await retained(sdk, target);
      assert.equal(dst.length, TOTAL, 'nothing stored twice');
      assert.deepEqual(
        dst.map(comparable),
        src.map(comparable),
        'same memories, field by field, in the same order',
      );

      const [ps, pd] = [await sdk.banks.get(SOURCE), await sdk.banks.get(target)];
      for (const k of ['name', 'mission', 'entity_count', 'document_count', 'disposition'] as const) {
        assert.deepEqual(pd[k], ps[k], k);
      }
      assert.deepEqual(
        (await sdk.banks.config.get(target)).overrides,
        (await sdk.banks.config.get(SOURCE)).overrides,
      );
      const entityView = async (bank: string) =>
        (await sdk.entities.list(bank, { limit: 500 }).toArray())
          .map((e) => ({ name: e.name, type: e.type, first: e.first_seen, last: e.last_seen }))
          .sort((a, b) => a.name.localeCompare(b.name));
      assert.deepEqual(await entityView(target), await entityView(SOURCE));
      const directiveView = async (bank: string) =>
        (await sdk.directives.list(bank)).map((d) => ({
          name: d.name,
          text: d.text,
          priority: d.priority,
          tags: d.tags,
          active: d.active,
        }));
      assert.deepEqual(await directiveView(target), await directiveView(SOURCE));
      const docView = async (bank: string) =>
        (await sdk.documents.list(bank, { limit: 500 }).toArray()).map((d) => [d.id, d.memory_count]).sort();
      assert.deepEqual(await docView(target), await docView(SOURCE));

      const again = await runCli(args, env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr, /was imported into copy@example\.com already/);
      assert.equal((await retained(sdk, target)).length, TOTAL);
    });

    test('a batch sent but not acknowledged is never stored twice', async () => {
      const target = 'copy@example.com';
      const progressFile = `${exported}.progress.json`;
      const args = ['import', exported, '--bank', target, '--batch-size', String(BATCH)];
      const done = JSON.parse(await readFile(progressFile, 'utf8'));
      const last = done.batches - 1;
      const lastSize = TOTAL - last * BATCH;
      const rewind = (inFlight: unknown) =>
        writeFile(
          progressFile,
          JSON.stringify({
            ...done,
            next_batch: last,
            items_done: TOTAL - lastSize,
            in_flight: inFlight,
            completed: false,
          }),
        );
      // Stored, then killed before the acknowledgement was written: memories newer than the
      // bank's newest one before the batch tell.
      const before = (await retained(sdk, target))[lastSize]!.id;
      await rewind({ batch: last, newest_before: before });
      const counted = await runCli(args, env);
      assert.equal(counted.code, 0, counted.stderr);
      assert.match(counted.stderr, new RegExp(`batch ${last} was stored before the interruption`));
      assert.equal(JSON.parse((await readFile(progressFile, 'utf8')).trim()).completed, true);
      assert.equal((await retained(sdk, target)).length, TOTAL);
      // Without that record the batch is sent again under its Idempotency-Key: the server replays it.
      await rewind(null);
      const replayed = await runCli([...args, '--json'], env);
      assert.equal(replayed.code, 0, replayed.stderr);
      assert.equal(JSON.parse(replayed.stdout).sent_batches, 1);
      assert.equal((await retained(sdk, target)).length, TOTAL);
    });

    test('plain Retain items import too; a cut-off export is refused', async () => {
      const plain = join(dir, 'items.jsonl');
      await writeFile(
        plain,
        `${JSON.stringify({ content: 'Gita runs marathons.', tags: ['sport'] })}\n\n${JSON.stringify({ content: 'Gita lives in Pune.' })}\n`,
      );
      const r = await runCli(['import', plain, '--bank', 'gita', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), {
        bank: 'gita',
        items: 2,
        batches: 1,
        sent_batches: 1,
        status: 'completed',
        items_per_second: JSON.parse(r.stdout).items_per_second,
      });
      const texts = (await retained(sdk, 'gita')).map((m) => m.text);
      assert.deepEqual(texts, ['Gita lives in Pune.', 'Gita runs marathons.']);

      const cut = join(dir, 'cut.jsonl');
      const whole = (await readFile(exported, 'utf8')).trim().split('\n');
      await writeFile(cut, `${whole.slice(0, 100).join('\n')}\n`);
      const refused = await runCli(['import', cut, '--bank', 'never'], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /has no end line: the export was cut off/);
      await assert.rejects(sdk.banks.get('never'));
    });
  });
}
