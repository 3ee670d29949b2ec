import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  ApiKey,
  AuditEntry,
  AuditListParams,
  CreatedApiKey,
  CreateKeyParams,
  CreateProjectParams,
  Project,
  ProjectWithUsage,
  UpdateProjectParams,
} from '../types.js';
import { seg } from './paths.js';

/** The audit trail of the project, newest first. Needs `admin`. */
export class AuditResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  list(params: AuditListParams = {}, options?: RequestOptions): PagedList<AuditEntry> {
    const { cursor, ...filters } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<AuditEntry>>('GET', `${this.prefix}/audit`, {
          query: { ...filters, cursor: c },
          options,
        }),
      cursor,
    );
  }
}

/** API keys of a project. Operator only (always `/v1/default`). */
export class KeysResource {
  constructor(private readonly t: Transport) {}

  /**
   * Mints a key; `key` holds the secret, shown only in this answer. When that answer is lost and
   * the call is retried, the server never sends the secret again: it answers 409 `already_done`
   * (a `ConflictError`, the key's id in `body.error.id`); revoke that key and mint another.
   */
  create(project: string, params: CreateKeyParams, options?: RequestOptions): Promise<CreatedApiKey> {
    return this.t.request('POST', `/v1/default/projects/${seg(project)}/keys`, { body: params, options });
  }

  /** Keys without their secrets. */
  async list(project: string, options?: RequestOptions): Promise<ApiKey[]> {
    const page = await this.t.request<{ items: ApiKey[] }>(
      'GET',
      `/v1/default/projects/${seg(project)}/keys`,
      {
        options,
      },
    );
    return page.items;
  }

  /** Revokes a key at once. */
  revoke(project: string, keyId: string, options?: RequestOptions): Promise<{ revoked: true; id: string }> {
    return this.t.request('DELETE', `/v1/default/projects/${seg(project)}/keys/${seg(keyId)}`, { options });
  }
}

/** Projects (tenants) and their limits. Operator only (always `/v1/default`). */
export class ProjectsResource {
  readonly keys: KeysResource;

  constructor(private readonly t: Transport) {
    this.keys = new KeysResource(t);
  }

  async list(options?: RequestOptions): Promise<Project[]> {
    const page = await this.t.request<{ items: Project[] }>('GET', '/v1/default/projects', { options });
    return page.items;
  }

  /** Creates a project (409 when the id exists). */
  create(params: CreateProjectParams, options?: RequestOptions): Promise<Project> {
    return this.t.request('POST', '/v1/default/projects', { body: params, options });
  }

  /** The project with its effective limits (server defaults applied) and current usage, cost budgets included. */
  get(project: string, options?: RequestOptions): Promise<ProjectWithUsage> {
    return this.t.request('GET', `/v1/default/projects/${seg(project)}`, { options });
  }

  /** Renames a project or changes its limits (`null` = unlimited). */
  update(project: string, params: UpdateProjectParams, options?: RequestOptions): Promise<Project> {
    return this.t.request('PATCH', `/v1/default/projects/${seg(project)}`, { body: params, options });
  }

  /** Deletes a project and all its data (`default` cannot be deleted). */
  delete(project: string, options?: RequestOptions): Promise<{ deleted: true; id: string }> {
    return this.t.request('DELETE', `/v1/default/projects/${seg(project)}`, { options });
  }
}
