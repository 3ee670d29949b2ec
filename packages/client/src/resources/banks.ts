import { ACTIONS } from '../../../../src/contract/actions.js';
import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  BankStats,
  ClearedMemories,
  ClearedObservations,
  EntityDetail,
  EntityGraph,
  EntityGraphParams,
  FactType,
  ListTagsParams,
  LlmHealth,
  MemoriesTimeseries,
  ObservationScopes,
  TagPage,
  TimeseriesParams,
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
import { bankPath, seg } from './paths.js';

/** A bank's configuration: effective values and this bank's overrides. */
export class BankConfigResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  get(bank: string, options?: RequestOptions): Promise<BankConfig> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/config'), { options });
  }

  /** Removes every override but `encryption` (resetting that would decrypt the bank). Needs `admin`. */
  reset(bank: string, options?: RequestOptions): Promise<BankConfig> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, '/config'), { options });
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

  /** Memories, links, documents, operations and consolidation of the bank, counted. */
  stats(bank: string, options?: RequestOptions): Promise<BankStats> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/stats'), { options });
  }

  /** Memories of the last `period` counted by fact type, in minute, hour or day buckets. */
  timeseries(
    bank: string,
    params: TimeseriesParams = {},
    options?: RequestOptions,
  ): Promise<MemoriesTimeseries> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/stats/memories-timeseries'), {
      query: params,
      options,
    });
  }

  /** The bank's tags with how many memories carry each; `q` is a pattern with `*`. */
  tags(bank: string, params: ListTagsParams = {}, options?: RequestOptions): Promise<TagPage> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/tags'), { query: params, options });
  }

  /** The tag sets observations were consolidated under, with how many each. */
  observationScopes(bank: string, options?: RequestOptions): Promise<ObservationScopes> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/observations/scopes'), { options });
  }

  /** Deletes what consolidation wrote and rewinds it, so its next run rebuilds it. Needs `admin`. */
  clearObservations(bank: string, options?: RequestOptions): Promise<ClearedObservations> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, '/observations'), { options });
  }

  /** Deletes every memory (of one fact type) and the documents left empty; the bank stays. Needs `admin`. */
  clearMemories(
    bank: string,
    params: { type?: FactType } = {},
    options?: RequestOptions,
  ): Promise<ClearedMemories> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, '/memories'), { query: params, options });
  }

  /** One minimal, metered call to the model: whether it answers (status only). Needs `admin`. */
  probeLlm(bank: string, options?: RequestOptions): Promise<LlmHealth> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/health/llm'), {
      options,
      read: ACTIONS['banks.llm.probe'].read,
    });
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

  /** One entity and the memories that mention it. */
  get(bank: string, id: string, options?: RequestOptions): Promise<EntityDetail> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/entities/${seg(id)}`), { options });
  }

  /** Entities mentioned by the same memories, as a graph. */
  graph(bank: string, params: EntityGraphParams = {}, options?: RequestOptions): Promise<EntityGraph> {
    return this.t.request('GET', bankPath(this.prefix, bank, '/entities/graph'), { query: params, options });
  }

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
