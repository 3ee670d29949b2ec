import type { RequestOptions, Transport } from '../http.js';
import type { CreateDirectiveParams, DeletedDirective, Directive, UpdateDirectiveParams } from '../types.js';
import { bankPath, seg } from './paths.js';

/** Directives: standing instructions that shape a bank's Reflect answers. Needs `admin`. */
export class DirectivesResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  async list(bank: string, options?: RequestOptions): Promise<Directive[]> {
    const res = await this.t.request<{ items: Directive[] }>(
      'GET',
      bankPath(this.prefix, bank, '/directives'),
      {
        options,
      },
    );
    return res.items;
  }

  get(bank: string, id: string, options?: RequestOptions): Promise<Directive> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/directives/${seg(id)}`), { options });
  }

  create(bank: string, params: CreateDirectiveParams, options?: RequestOptions): Promise<Directive> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/directives'), { body: params, options });
  }

  /** Changes the given fields; `null` or absent leaves a field as it is. */
  update(
    bank: string,
    id: string,
    params: UpdateDirectiveParams,
    options?: RequestOptions,
  ): Promise<Directive> {
    return this.t.request('PATCH', bankPath(this.prefix, bank, `/directives/${seg(id)}`), {
      body: params,
      options,
    });
  }

  delete(bank: string, id: string, options?: RequestOptions): Promise<DeletedDirective> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/directives/${seg(id)}`), { options });
  }
}
