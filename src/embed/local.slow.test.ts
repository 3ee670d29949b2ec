import assert from 'node:assert/strict';
import { watch } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { CACHE_FILE } from './glove-cache.js';
import { createLocalEmbedder, LOCAL_EMBEDDER_ID, loadSifModel } from './local.js';

/** The cache every test run shares, so that only the first run on a machine pays for the build. */
const sharedCacheDir = process.env.MNEMO_CACHE_DIR ?? join(homedir(), '.cache', 'mnemo');
const embedder = createLocalEmbedder({ cacheDir: sharedCacheDir });

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (v: Float32Array) => Math.sqrt(cosine(v, v));

async function one(text: string): Promise<Float32Array> {
  const [vector] = await embedder.embed([text]);
  return vector!;
}

test('builds the cache once per process, atomically beside other builders, then reuses it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mnemo-embed-'));
  try {
    const written = new Set<string>();
    const watcher = watch(dir, (_event, name) => {
      if (name?.endsWith('.tmp')) written.add(name);
    });
    // Two embedders, two spellings of one directory: one load between them. Beside them an unshared
    // loader builds too, as another process would: two writers, one intact file.
    const a = createLocalEmbedder({ cacheDir: dir });
    const b = createLocalEmbedder({ cacheDir: `${dir}/./` });
    const texts = ['the cache is built once', 'and shared'];
    const [other, ...results] = await Promise.all([
      loadSifModel(dir),
      a.embed(texts),
      b.embed(texts),
      a.embed(texts),
    ]);
    await delay(100);
    watcher.close();
    assert.equal(written.size, 2, `temporary files written: ${[...written].join(', ')}`);
    assert.deepEqual(await readdir(dir), [CACHE_FILE]);
    assert.deepEqual(results[1], results[0]);
    assert.deepEqual(results[2], results[0]);
    assert.deepEqual(
      texts.map((t) => other.embed(t)),
      results[0],
    );

    const before = await stat(join(dir, CACHE_FILE));
    const reloaded = await loadSifModel(dir);
    const after = await stat(join(dir, CACHE_FILE));
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtimeMs, before.mtimeMs);
    // Read back from the file, the model gives the very vectors of the model it was written from.
    assert.deepEqual(
      texts.map((t) => reloaded.embed(t)),
      results[0],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('identity and size', async () => {
  assert.equal(embedder.id, LOCAL_EMBEDDER_ID);
  assert.equal(embedder.id, 'local:glove-sif-100d:v1');
  assert.equal(embedder.dimensions, 100);
  const [vector] = await embedder.embed(['hello world']);
  assert.ok(vector instanceof Float32Array);
  assert.equal(vector.length, 100);
});

test('unit length, one vector per text, in order', async () => {
  const texts = ['I adopted a puppy', 'the stock market fell', 'She moved to Paris in 2019.', 'ok'];
  const vectors = await embedder.embed(texts);
  assert.equal(vectors.length, texts.length);
  for (const v of vectors) assert.ok(Math.abs(norm(v) - 1) < 1e-5);
  for (let i = 0; i < texts.length; i++) assert.deepEqual(vectors[i], await one(texts[i]!));
  assert.deepEqual(await embedder.embed([]), []);
});

test('similar sentences are closer than unrelated ones', async () => {
  const [puppy, dog, market] = await embedder.embed([
    'I adopted a puppy',
    'we got a new dog',
    'the stock market fell',
  ]);
  const related = cosine(puppy!, dog!);
  assert.ok(related > 0.4, `puppy~dog ${related}`);
  assert.ok(related > cosine(puppy!, market!) + 0.3, `puppy~market ${cosine(puppy!, market!)}`);
  assert.ok(related > cosine(dog!, market!) + 0.3, `dog~market ${cosine(dog!, market!)}`);

  const query = await one('what pet does the user have?');
  const [cat, job] = await embedder.embed(['I have a cat named Whiskers', 'She started a new job at a bank']);
  assert.ok(cosine(query, cat!) > cosine(query, job!));
});

test('deterministic', async () => {
  const text = 'The meeting was moved to Friday afternoon.';
  const first = await one(text);
  const again = await createLocalEmbedder({ cacheDir: sharedCacheDir }).embed([text, text]);
  assert.deepEqual(again[0], first);
  assert.deepEqual(again[1], first);
});

test('texts without known words get one fixed unit vector, at cosine 0 from the rest', async () => {
  const [empty, blank, symbols, unknown] = await embedder.embed(['', '   \n', '?!... --', 'zxqvbnm qwxzkj']);
  for (const v of [empty!, blank!, symbols!, unknown!]) {
    assert.ok(v.every(Number.isFinite));
    assert.ok(Math.abs(norm(v) - 1) < 1e-5);
    assert.deepEqual(v, empty);
  }
  for (const text of ['I adopted a puppy', 'dog', 'the'])
    assert.ok(Math.abs(cosine(empty!, await one(text))) < 1e-4);
});

test('case, punctuation, possessives, contractions and numbers', async () => {
  assert.deepEqual(await one('THE DOG BARKED!!!'), await one('the dog barked'));
  assert.deepEqual(await one('"Dog," (barked).'), await one('dog barked'));
  assert.deepEqual(await one("the dog's bowl"), await one('the dog bowl'));
  assert.deepEqual(await one('the dog’s bowl'), await one("the dog's bowl"));
  assert.deepEqual(await one("I don't like it"), await one('I do not like it'));
  assert.deepEqual(await one('I have 3 cats'), await one('I have three cats'));
  assert.deepEqual(await one('a cat-lover'), await one('a cat lover'));
  assert.deepEqual(await one('we walked 10km'), await one('we walked ten km'));
  assert.ok(cosine(await one("I can't swim"), await one('I cannot swim')) > 0.8);
});

test('an aborted signal rejects', async () => {
  const controller = new AbortController();
  controller.abort(new Error('stop'));
  await assert.rejects(embedder.embed(['text'], controller.signal), /stop/);
});
