import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { BankCodec, isSealed, plainText, storePlain } from '../../src/core/crypto/codec.js';
import { rewrap } from '../../src/core/crypto/keyring.js';
import { parseMasterKey, unwrapDataKey, wrapDataKey } from '../../src/core/crypto/master-key.js';
import { ENGINES } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { encryptedAppForSuite } from './encryption-helpers.js';

describe('master keys and bank codecs', () => {
  test('the master key is 32 bytes as base64, base64url or hex; anything else is refused', () => {
    const raw = randomBytes(32);
    for (const text of [
      raw.toString('base64'),
      raw.toString('base64url'),
      raw.toString('hex'),
      ` ${raw.toString('hex')}\n`,
    ]) {
      assert.deepEqual(parseMasterKey(text), raw);
    }
    for (const bad of [
      '',
      'secret',
      randomBytes(16).toString('base64'),
      randomBytes(33).toString('base64'),
      'z'.repeat(64),
    ]) {
      assert.throws(() => parseMasterKey(bad), /32 random bytes/, JSON.stringify(bad));
    }
  });

  test('a wrapped data key opens only with its master key and for its own bank', () => {
    const master = randomBytes(32);
    const dataKey = randomBytes(32);
    const wrapped = wrapDataKey(master, dataKey, 'p', 'bank-a');
    assert.deepEqual(unwrapDataKey(master, wrapped, 'p', 'bank-a'), dataKey);
    assert.throws(() => unwrapDataKey(randomBytes(32), wrapped, 'p', 'bank-a'));
    assert.throws(() => unwrapDataKey(master, wrapped, 'p', 'bank-b'));
    assert.throws(() => unwrapDataKey(master, wrapped, 'q', 'bank-a'));
  });

  test('a key wrapped for a legacy non-NFC id (migration 20) opens only for the bank it was renamed to', () => {
    const master = randomBytes(32);
    const dataKey = randomBytes(32);
    const old = 'cre\u0300me'; // decomposed
    const bound = (id: string) =>
      `${wrapDataKey(master, dataKey, 'p', old)}.${Buffer.from(id).toString('base64url')}`;
    const legacyName = `crème~legacy-${createHash('md5').update(old).digest('hex').slice(0, 8)}`;
    assert.deepEqual(unwrapDataKey(master, bound(old), 'p', 'crème'), dataKey);
    assert.deepEqual(unwrapDataKey(master, bound(old), 'p', legacyName), dataKey);
    // copied to another bank, suffix and all, it does not open there
    assert.throws(() => unwrapDataKey(master, bound(old), 'p', 'other-bank'));
    assert.throws(() => unwrapDataKey(master, bound(old), 'q', 'crème'));
    // a suffix naming an id in NFC (any bank of today) is refused
    const fresh = `${wrapDataKey(master, dataKey, 'p', 'bank-a')}.${Buffer.from('bank-a').toString('base64url')}`;
    assert.throws(() => unwrapDataKey(master, fresh, 'p', 'bank-a'));
    // a master key rotation wraps it for the new id, in the plain form
    const next = randomBytes(32);
    const rotated = rewrap(master, next, 'p', 'crème', bound(old))!;
    assert.equal(rotated.split('.').length, 2);
    assert.deepEqual(unwrapDataKey(next, rotated, 'p', 'crème'), dataKey);
  });

  test('sealed values open only with their bank key and field; tampering is detected', () => {
    const codec = new BankCodec(randomBytes(32));
    const secret = 'Alice is allergic to penicillin 💊';
    const sealed = codec.seal(secret, 'text');
    assert.ok(isSealed(sealed));
    assert.ok(!sealed.includes('Alice'));
    assert.notEqual(codec.seal(secret, 'text'), sealed, 'a fresh nonce every time');
    assert.equal(codec.open(sealed, 'text'), secret);
    assert.throws(() => codec.open(sealed, 'context'), 'bound to its field');
    assert.throws(() => new BankCodec(randomBytes(32)).open(sealed, 'text'), 'another bank cannot open it');
    const body = Buffer.from(sealed.slice(4), 'base64url');
    body[20] = (body[20] ?? 0) ^ 1;
    assert.throws(
      () => codec.open(`${sealed.slice(0, 4)}${body.toString('base64url')}`, 'text'),
      'tampering fails',
    );
  });

  test('keyed hashes are stable within a bank and differ between banks', () => {
    const a = new BankCodec(randomBytes(32));
    const b = new BankCodec(randomBytes(32));
    assert.equal(a.term('beagle'), a.term('beagle'));
    assert.notEqual(a.term('beagle'), b.term('beagle'));
    assert.notEqual(a.term('beagle'), a.term('beagles'));
    assert.match(a.entityKey('bob smith'), /^[0-9a-f]{32} [0-9a-f]{32}$/);
    assert.equal(
      a.entityKey('bob smith').split(' ')[0],
      a.entityKey('bob'),
      'word by word: first names still match',
    );
  });

  test('plaintext that looks sealed is escaped and comes back unchanged', () => {
    for (const v of ['\u0001e1:AAAA', '\u0001p:x', '\u0001', 'plain', '']) {
      assert.equal(plainText(storePlain(v)), v);
      assert.ok(!isSealed(storePlain(v)));
    }
  });
});

for (const engine of ENGINES) {
  describe(`a corrupted ciphertext is an error, never garbage (${engine})`, () => {
    const e = encryptedAppForSuite(engine);

    test('listing a bank whose stored ciphertext was altered answers 500 without a body of garbage', async () => {
      await e.call('PUT', '/v1/default/banks/tampered', {});
      await e.call('PATCH', '/v1/default/banks/tampered/config', { updates: { encryption: 'managed' } });
      const ok = await e.call('POST', '/v1/default/banks/tampered/memories', {
        items: [{ content: 'intact' }],
      });
      assert.equal(ok.status, 200);
      // a row whose ciphertext does not authenticate, written under the encryption layer
      const ciphertext = randomBytes(40).toString('base64url');
      const forged = newMemory({
        text: `\u0001e1:${ciphertext}`,
        content_hash: 'x',
        embedding: new Float32Array(100).fill(0.1),
        terms: new Map(),
        encrypted: true,
      });
      await e.raw.insertMemories('default', 'tampered', [forged]);
      const r = await e.call('GET', '/v1/default/banks/tampered/memories');
      assert.equal(r.status, 500);
      assert.equal(r.body.error.code, 'internal');
      assert.ok(!JSON.stringify(r.body).includes(ciphertext), 'the error shows the stored ciphertext');
    });
  });
}
