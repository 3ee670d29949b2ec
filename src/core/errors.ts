// The codes and the error class are part of the wire contract (src/contract/errors.ts); core
// throws them, and its modules import them from here.
export { ERROR_STATUS, type ErrorCode } from '../contract/vocabulary.js';
export { AppError, type ErrorDetail, invalid, notFound } from '../contract/errors.js';
