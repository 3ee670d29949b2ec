import { AppError } from '../contract/errors.js';

/**
 * A database error caused by a value the client sent (SQLSTATE class 22, "data exception":
 * a NUL character in text, an out-of-range number or date; 54000: a value too large to index)
 * becomes a 400 instead of an internal error. The statement failed, so nothing was written.
 */
export function inputError(err: unknown): AppError | null {
  const code = (err as { code?: unknown } | null)?.code;
  // 23503: the write refers to a row (project, bank, memory) that a concurrent request deleted
  // after this one found it. Nothing was written; a retry sees the deletion.
  if (code === '23503') {
    return new AppError(
      'conflict',
      'something this request writes to was deleted meanwhile by another request; retry',
      {
        extra: { reason: 'deleted_meanwhile' },
      },
    );
  }
  if (typeof code !== 'string' || !(code.startsWith('22') || code === '54000')) return null;
  return new AppError(
    'validation_error',
    `a value in the request cannot be stored: ${(err as Error).message}`,
  );
}
