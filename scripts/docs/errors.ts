import { ERROR_MEANINGS } from '../../src/contract/error-meanings.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/contract/vocabulary.js';
import { code, table } from './regions.js';

/** The error codes with their status and meaning (docs/api.md), in the order of `ERROR_STATUS`. */
export function errorTable(): string {
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  return table(
    ['status', 'code', 'when'],
    codes.map((c) => [String(ERROR_STATUS[c]), code(c), ERROR_MEANINGS[c]]),
  );
}
