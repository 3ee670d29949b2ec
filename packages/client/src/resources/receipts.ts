import type { RequestOptions, Transport } from '../http.js';
import type { Receipt, ReceiptVerdict, VerifyReceiptParams } from '../types.js';
import { seg } from './paths.js';

/**
 * Receipts of deletions: every delete of a memory, document or bank answers with one
 * (`result.receipt`); they outlive their bank. Reading and verifying need `recall`, and a key
 * limited to some banks sees only the receipts of those banks.
 */
export class ReceiptsResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** A receipt again, by id. */
  get(id: string, options?: RequestOptions): Promise<Receipt> {
    return this.t.request('GET', `${this.prefix}/receipts/${seg(id)}`, { options });
  }

  /** Asks the server whether it signed this receipt as given (only the server holds the key). */
  verify(receipt: VerifyReceiptParams, options?: RequestOptions): Promise<ReceiptVerdict> {
    return this.t.request('POST', `${this.prefix}/receipts/verify`, { body: receipt, options });
  }
}
