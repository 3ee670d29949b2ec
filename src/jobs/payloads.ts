import type { Operation } from '../store/records.js';
import type { Store } from '../store/store.js';

/** Bytes of payload JSON a worker keeps between slices (a Retain body is at most 10 MB). */
export const PAYLOAD_CACHE_BYTES = 32 * 2 ** 20;

interface Kept {
  payload: unknown;
  bytes: number;
}

/** An operation as claimed: where it lives, which it is, and when it was queued. */
export interface ClaimedOp {
  projectId: string;
  operation: Pick<Operation, 'id' | 'bank_id' | 'created_at'>;
}

const keyOf = ({ projectId, operation: o }: ClaimedOp) =>
  `${projectId}\u0000${o.bank_id}\u0000${o.id}\u0000${o.created_at.getTime()}`;

/**
 * The payloads of the operations a worker is running, kept between their slices. A payload never
 * changes once queued, yet a sliced operation is claimed again for every slice: reading and
 * parsing a 1 MB Retain body each time (on the embedded engine, in the thread that serves
 * requests) cost tens of milliseconds a slice. Now an operation's payload is read once, on its
 * first slice in this process, and kept while it fits: least recently used out first, a payload
 * larger than the whole budget read each time. Keyed by the operation's id and creation time, so
 * an operation deleted and queued again under the same id is read afresh.
 */
export class PayloadCache {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;
  /** Reads from the database, for tests: one per operation while it stays cached. */
  reads = 0;

  constructor(
    private readonly store: Pick<Store, 'operationPayload'>,
    private readonly maxBytes = PAYLOAD_CACHE_BYTES,
  ) {}

  async get(op: ClaimedOp): Promise<unknown> {
    const key = keyOf(op);
    const hit = this.kept.get(key);
    if (hit) {
      // Most recently used last.
      this.kept.delete(key);
      this.kept.set(key, hit);
      return hit.payload;
    }
    this.reads++;
    const found = await this.store.operationPayload(op.projectId, op.operation.bank_id, op.operation.id);
    if (!found) return null;
    if (found.bytes <= this.maxBytes) {
      this.kept.set(key, found);
      this.bytes += found.bytes;
      for (const [k, v] of this.kept) {
        if (this.bytes <= this.maxBytes) break;
        this.kept.delete(k);
        this.bytes -= v.bytes;
      }
    }
    return found.payload;
  }

  /** Forgets a finished operation's payload. */
  drop(op: ClaimedOp): void {
    const key = keyOf(op);
    const v = this.kept.get(key);
    if (!v) return;
    this.kept.delete(key);
    this.bytes -= v.bytes;
  }

  /** Payloads kept now. */
  get size(): number {
    return this.kept.size;
  }
}
