import { ACTIONS } from '../../../../src/contract/actions.js';
import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  BankConfig,
  BankConfigUpdates,
  BankIdentity,
  BankProfile,
  ConsolidateResponse,
  DeletedBank,
  ListBanksParams,
  UpsertBankParams,
  Entity,
  PageParams,
  ReflectParams,
  ReflectResponse,
} from '../types.js';
import { bankPath } from './paths.js';

/** A bank's configuration: effective values and this bank's overrides. */
export class BankConfigResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  get(bank: string, options?: RequestOptions): Promise<BankConfig> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/config'), { options });
  }

  /** Sets keys (unknown keys or bad values are a 400); `null` resets a key. Needs `admin`. */
  update(bank: string, updates: BankConfigUpdates, options?: RequestOptions): Promise<BankConfig> {
    return this.t.request('PATCH', bankPath(this.prefix, bank, '/config'), { body: { updates }, options });
  }
}

/** Bank profiles, identity, deletion, configuration and consolidation. */
export class BanksResource {
  readonly config: BankConfigResource;

  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {
    this.config = new BankConfigResource(t, prefix);
  }

  /** The project's banks ordered by id: `await` for one page, `for await` for all of them. */
  list(params: ListBanksParams = {}, options?: RequestOptions): PagedList<BankProfile> {
    const { cursor, ...filters } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<BankProfile>>('GET', `${this.prefix}/banks`, {
          query: { ...filters, cursor: c },
          options,
        }),
      cursor,
    );
  }

  /** The bank's profile with counts and disposition (404 when it does not exist). */
  get(bank: string, options?: RequestOptions): Promise<BankProfile> {
    return this.t.request('GET', bankPath(this.prefix, bank), { options });
  }

  /** Sets the name and mission of an existing bank (`null` clears). Needs `admin`. */
  update(bank: string, identity: BankIdentity, options?: RequestOptions): Promise<BankProfile> {
    return this.t.request('PATCH', bankPath(this.prefix, bank), { body: identity, options });
  }

  /**
   * Creates the bank, or updates it, with identity and config keys in one call (Hindsight's
   * `PUT /banks/{bank}`). Needs `admin`.
   */
  upsert(bank: string, params: UpsertBankParams, options?: RequestOptions): Promise<BankProfile> {
    return this.t.request('PUT', bankPath(this.prefix, bank), { body: params, options });
  }

  /** Queues a consolidation of new memories into observations (one already waiting is returned). */
  consolidate(bank: string, options?: RequestOptions): Promise<ConsolidateResponse> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/consolidate'), { options });
  }

  /** Deletes the bank and its memories (its audit trail stays). Needs `admin`. */
  delete(bank: string, options?: RequestOptions): Promise<DeletedBank> {
    return this.t.request('DELETE', bankPath(this.prefix, bank), { options });
  }
}

/** A bank's entities, most mentioned first. */
export class EntitiesResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  list(bank: string, params: PageParams = {}, options?: RequestOptions): PagedList<Entity> {
    const { cursor, limit } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<Entity>>('GET', bankPath(this.prefix, bank, '/entities'), {
          query: { limit, cursor: c },
          options,
        }),
      cursor,
    );
  }
}

/** Reflect: a written answer over what the bank knows; a string is taken as the query. */
export function reflect(
  t: Transport,
  prefix: string,
  bank: string,
  params: ReflectParams | string,
  options?: RequestOptions,
): Promise<ReflectResponse> {
  const body = typeof params === 'string' ? { query: params } : params;
  return t.request('POST', bankPath(prefix, bank, '/reflect'), { body, options, read: ACTIONS.reflect.read });
}
