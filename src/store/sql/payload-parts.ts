import type { Queryable } from '../db.js';
import { breathe } from '../breathe.js';

/**
 * Characters of a queued payload's JSON text one part holds, and one statement writes or reads:
 * on the embedded engine a 1.1 MB payload in one statement held the event loop 26 ms of CPU in
 * memory and 52 ms in a data directory (issue 18), and a body may be 10 MB.
 */
export const PAYLOAD_PART_CHARS = 256 * 1024;

/** The member of a stub payload giving the number of parts its JSON text is kept in. */
const PARTS = '\u0001parts';

/** The member that marks a sealed payload (`SEALED_MEMBER` of core/crypto/codec.ts). */
const SEALED = '\u0001e1';

/** A payload's JSON text in parts, never cut between the two halves of a surrogate pair. */
export function payloadParts(text: string, size = PAYLOAD_PART_CHARS): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

/**
 * What the operation's payload column holds for a payload kept in `count` parts. It keeps the
 * sealed marker as a flag, so that an encryption switch still finds which payloads to convert.
 */
export function payloadStub(payload: unknown, count: number): Record<string, unknown> {
  const sealed = typeof payload === 'object' && payload !== null && SEALED in payload;
  return { [PARTS]: count, ...(sealed && { [SEALED]: true }) };
}

/**
 * What the payload column holds for a payload, as JSON text and as a value: the payload itself,
 * or the stub of the parts its text is kept in when it is longer than one (none otherwise).
 */
export function storedPayload(payload: unknown): {
  stored: string | undefined;
  value: unknown;
  parts: string[];
} {
  const text = JSON.stringify(payload) as string | undefined;
  const parts = text === undefined ? [] : payloadParts(text);
  if (parts.length <= 1) return { stored: text, value: payload, parts: [] };
  const stub = payloadStub(payload, parts.length);
  return { stored: JSON.stringify(stub), value: stub, parts };
}

/** The number of parts a stored payload's text is kept in; null when it is stored whole. */
export function partsOf(stored: unknown): number | null {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return null;
  const n = (stored as Record<string, unknown>)[PARTS];
  return typeof n === 'number' ? n : null;
}

/**
 * Writes an operation's payload parts, one statement each with a turn of the event loop between;
 * replaces any it had. Inside the caller's transaction, which writes the stub.
 */
export async function writePayloadParts(
  tx: Queryable,
  projectId: string,
  bankId: string,
  operationId: string,
  parts: string[],
): Promise<void> {
  await tx.query(
    'DELETE FROM operation_payload_parts WHERE project_id = $1 AND bank_id = $2 AND operation_id = $3',
    [projectId, bankId, operationId],
  );
  for (const [i, text] of parts.entries()) {
    await tx.query(
      `INSERT INTO operation_payload_parts (project_id, bank_id, operation_id, part, text)
       VALUES ($1, $2, $3, $4, $5)`,
      [projectId, bankId, operationId, i, text],
    );
    await breathe();
  }
}

/**
 * The JSON text of a payload kept in `count` parts, one statement a part; null when a part is
 * missing (the operation was deleted, or its payload emptied, meanwhile). Read in one snapshot
 * by the caller (or in one transaction).
 */
export async function readPayloadParts(
  tx: Queryable,
  projectId: string,
  bankId: string,
  operationId: string,
  count: number,
): Promise<string | null> {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    const rows = await tx.query<{ text: string }>(
      `SELECT text FROM operation_payload_parts
       WHERE project_id = $1 AND bank_id = $2 AND operation_id = $3 AND part = $4`,
      [projectId, bankId, operationId, i],
    );
    if (!rows[0]) return null;
    parts.push(rows[0].text);
    await breathe();
  }
  return parts.join('');
}
