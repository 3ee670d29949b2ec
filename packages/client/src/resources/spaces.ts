import type { RequestOptions, Transport } from '../http.js';
import type { Attachment, BankProfile, CreateSpaceParams, DeletedSpace, Space } from '../types.js';
import { seg } from './paths.js';

/** Spaces (organisations) and the banks in them. Every call needs `admin`. */
export class SpacesResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  async list(options?: RequestOptions): Promise<Space[]> {
    const page = await this.t.request<{ items: Space[] }>('GET', `${this.prefix}/spaces`, { options });
    return page.items;
  }

  /** Creates a space (409 when the id exists). */
  create(params: CreateSpaceParams, options?: RequestOptions): Promise<Space> {
    return this.t.request('POST', `${this.prefix}/spaces`, { body: params, options });
  }

  /** The profiles of the banks in a space. */
  async banks(space: string, options?: RequestOptions): Promise<BankProfile[]> {
    const page = await this.t.request<{ items: BankProfile[] }>(
      'GET',
      `${this.prefix}/spaces/${seg(space)}/banks`,
      {
        options,
      },
    );
    return page.items;
  }

  /** Puts a bank in the space (creating the bank if new; 409 when it is in another space). */
  attach(space: string, bank: string, options?: RequestOptions): Promise<Attachment> {
    return this.t.request('PUT', `${this.prefix}/spaces/${seg(space)}/banks/${seg(bank)}`, { options });
  }

  /** Takes a bank out of the space; its memories stay. */
  remove(space: string, bank: string, options?: RequestOptions): Promise<Attachment> {
    return this.t.request('DELETE', `${this.prefix}/spaces/${seg(space)}/banks/${seg(bank)}`, { options });
  }

  /** Deletes the space; its banks (and org bank) become unassigned. */
  delete(space: string, options?: RequestOptions): Promise<DeletedSpace> {
    return this.t.request('DELETE', `${this.prefix}/spaces/${seg(space)}`, { options });
  }
}
