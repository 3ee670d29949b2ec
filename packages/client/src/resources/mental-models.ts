import { ACTIONS } from '../../../../src/contract/actions.js';
import type { RequestOptions, Transport } from '../http.js';
import type {
  CreatedMentalModel,
  CreateMentalModelParams,
  DeletedMentalModel,
  ListMentalModelsParams,
  MentalModel,
  MentalModelDetail,
  MentalModelDryRun,
  MentalModelHistoryEntry,
  MentalModelList,
  MentalModelRefreshQueued,
  UpdateMentalModelParams,
} from '../types.js';
import { bankPath, seg } from './paths.js';

/**
 * Mental models: named source queries whose Reflect answers a bank keeps and refreshes.
 * Reading needs `recall`; creating, changing, clearing and deleting `admin`; refreshing `retain`.
 */
export class MentalModelsResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  private path(bank: string, id?: string, rest = '') {
    return bankPath(this.prefix, bank, `/mental-models${id === undefined ? '' : `/${seg(id)}`}${rest}`);
  }

  /** In creation order, with `total`; `tags` filter by `tags_match` (default `any`). */
  list(
    bank: string,
    params: ListMentalModelsParams = {},
    options?: RequestOptions,
  ): Promise<MentalModelList> {
    return this.t.request('GET', this.path(bank), { query: { ...params }, options });
  }

  get(bank: string, id: string, detail?: MentalModelDetail, options?: RequestOptions): Promise<MentalModel> {
    return this.t.request('GET', this.path(bank, id), { query: { detail }, options });
  }

  /** Keeps the model and queues its first refresh (`operation_id`). */
  create(
    bank: string,
    params: CreateMentalModelParams,
    options?: RequestOptions,
  ): Promise<CreatedMentalModel> {
    return this.t.request('POST', this.path(bank), { body: params, options });
  }

  /** Changes the given fields; `null` or absent leaves a field as it is. */
  update(
    bank: string,
    id: string,
    params: UpdateMentalModelParams,
    options?: RequestOptions,
  ): Promise<MentalModel> {
    return this.t.request('PATCH', this.path(bank, id), { body: params, options });
  }

  delete(bank: string, id: string, options?: RequestOptions): Promise<DeletedMentalModel> {
    return this.t.request('DELETE', this.path(bank, id), { options });
  }

  /** Each change of the content, newest first. */
  history(bank: string, id: string, options?: RequestOptions): Promise<MentalModelHistoryEntry[]> {
    return this.t.request('GET', this.path(bank, id, '/history'), { options });
  }

  /** Queues a refresh; poll `operations.get(bank, operation_id)` for its end. */
  refresh(bank: string, id: string, options?: RequestOptions): Promise<MentalModelRefreshQueued> {
    return this.t.request('POST', this.path(bank, id, '/refresh'), { options });
  }

  /** The refresh's answer now, beside the current content with a diff; stores nothing. */
  dryRunRefresh(bank: string, id: string, options?: RequestOptions): Promise<MentalModelDryRun> {
    return this.t.request('POST', this.path(bank, id, '/dry-run-refresh'), {
      options,
      read: ACTIONS['mental_models.dry_run'].read,
    });
  }

  /** Empties the content (kept in the history); stale until the next refresh. */
  clear(bank: string, id: string, options?: RequestOptions): Promise<MentalModel> {
    return this.t.request('POST', this.path(bank, id, '/clear'), { options });
  }
}
