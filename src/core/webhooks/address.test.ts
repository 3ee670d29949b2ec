import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkWebhookUrl, isPrivateAddress, privateHostReason } from './address.js';

test('private, loopback, link-local, metadata and embedded-IPv4 addresses are private; public ones are not', () => {
  for (const ip of [
    '127.0.0.1',
    '127.9.9.9',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::7f00:1',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::1',
  ])
    assert.equal(isPrivateAddress(ip), true, ip);
  for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700::1111', '2a00:1450:4001::200e'])
    assert.equal(isPrivateAddress(ip), false, ip);
  assert.equal(isPrivateAddress('not-an-ip'), true);
});

test('a name is judged by every address it resolves to', async () => {
  const resolver = (map: Record<string, string[]>) => async (h: string) => map[h] ?? [];
  const r = resolver({ 'mixed.example': ['93.184.216.34', '10.0.0.7'], 'public.example': ['93.184.216.34'] });
  assert.match((await privateHostReason('mixed.example', r)) ?? '', /10\.0\.0\.7/);
  assert.equal(await privateHostReason('public.example', r), null);
  assert.match((await privateHostReason('localhost', r)) ?? '', /this host/);
  assert.match((await privateHostReason('metadata.google.internal', r)) ?? '', /metadata/);
  const failing = async () => {
    throw new Error('ENOTFOUND');
  };
  assert.equal(await privateHostReason('unresolvable.example', failing), null);
});

test('URL form: http(s) only, no credentials; private hosts only when allowed', async () => {
  await assert.rejects(checkWebhookUrl('ftp://x.example/', true), /http or https/);
  await assert.rejects(checkWebhookUrl('https://u:p@x.example/', true), /credentials/);
  await assert.rejects(checkWebhookUrl('http://127.0.0.1:8080/h', false), /MNEMO_WEBHOOK_ALLOW_PRIVATE/);
  assert.equal(await checkWebhookUrl('http://127.0.0.1:8080/h', true), 'http://127.0.0.1:8080/h');
});
