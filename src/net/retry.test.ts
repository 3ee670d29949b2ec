import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseRetryAfter } from './retry.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  const parse = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), now);

  test('reads seconds, HTTP dates and retry-after-ms', () => {
    assert.equal(parse({ 'retry-after': '2' }), 2_000);
    assert.equal(parse({ 'retry-after': '0.5' }), 500);
    assert.equal(parse({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), 3_000);
    assert.equal(parse({ 'retry-after-ms': '250', 'retry-after': '9' }), 250);
  });

  test('caps long waits and ignores what it cannot read', () => {
    assert.equal(parse({ 'retry-after': '3600' }), 30_000);
    assert.equal(parse({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), 0);
    assert.equal(parse({ 'retry-after': 'soon' }), undefined);
    assert.equal(parse({}), undefined);
  });
});
