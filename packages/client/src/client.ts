import { InternalServerError, MnemoError } from './errors.js';
import { type RequestOptions, type Sleep, sleep, Transport } from './http.js';
import { AuditResource, ProjectsResource } from './resources/admin.js';
import { BanksResource, EntitiesResource, reflect } from './resources/banks.js';
import { DirectivesResource } from './resources/directives.js';
import { MentalModelsResource } from './resources/mental-models.js';
import { WebhooksResource } from './resources/webhooks.js';
import { DocumentsResource } from './resources/documents.js';
import { EvaluationsResource } from './resources/evaluations.js';
import { ReceiptsResource } from './resources/receipts.js';
import { BankAuditResource, LlmRequestsResource, TemplatesResource } from './resources/ledgers.js';
import { MemoriesResource } from './resources/memories.js';
import { OperationsResource } from './resources/operations.js';
import { SpacesResource } from './resources/spaces.js';
import { TransferResource } from './resources/transfer.js';
import type { Health, ReflectParams, ReflectResponse, VersionInfo } from './types.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8888';

export interface ClientOptions {
  /** The server, e.g. `https://mnemo.example.com` (default `http://127.0.0.1:8888`). */
  baseUrl?: string;
  /** A project API key (`mk_...`): the client talks to `/v1/me`, the key's project. */
  apiKey?: string;
  /** The operator token: the client talks to `/v1/default` (optional on a loopback server without one). */
  adminToken?: string;
  /** Forces the surface; e.g. `default` with an API key of project `default`. */
  surface?: 'me' | 'default';
  /** Retries after the first attempt on 408/409/429/5xx and connection errors (default 2). */
  maxRetries?: number;
  /** Milliseconds per attempt (default 60,000). */
  timeout?: number;
  /** A `fetch` implementation (default the global one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * @internal Not part of the documented API (docs/sdk.md): how the client waits between
   * attempts, so the SDK's own tests can check the waits it asks for (Retry-After, backoff)
   * without spending them. Default: a timer that the call's `signal` cuts short.
   */
  sleep?: Sleep;
}

/**
 * The mnemo client. `new Mnemo({ apiKey })` for a project's `/v1/me`; `new Mnemo({ baseUrl,
 * adminToken })` for the operator's `/v1/default`.
 */
export class Mnemo {
  readonly surface: 'me' | 'default';
  readonly baseUrl: string;
  readonly memories: MemoriesResource;
  readonly banks: BanksResource;
  readonly entities: EntitiesResource;
  readonly spaces: SpacesResource;
  readonly operations: OperationsResource;
  readonly directives: DirectivesResource;
  readonly webhooks: WebhooksResource;
  readonly documents: DocumentsResource;
  /** Document transfer: export a bank's documents as a ZIP, poll, download, import. */
  readonly transfer: TransferResource;
  readonly evaluations: EvaluationsResource;
  readonly mentalModels: MentalModelsResource;
  /** Signed receipts of deletions: read again and verified. */
  readonly receipts: ReceiptsResource;
  readonly audit: AuditResource;
  /** One bank's audit log and its counts over time. */
  readonly bankAudit: BankAuditResource;
  /** The language model calls made for a bank. */
  readonly llmRequests: LlmRequestsResource;
  /** Bank templates: export, import (or its dry run), the manifest's schema. */
  readonly templates: TemplatesResource;
  /** Operator only: projects and their keys, always on `/v1/default`. */
  readonly projects: ProjectsResource;
  private readonly transport: Transport;
  private readonly prefix: string;

  constructor(options: ClientOptions = {}) {
    if (options.apiKey && options.adminToken) {
      throw new MnemoError('give either apiKey (for /v1/me) or adminToken (for /v1/default), not both', {
        code: 'invalid_options',
      });
    }
    this.surface = options.surface ?? (options.apiKey ? 'me' : 'default');
    if (this.surface === 'me' && !options.apiKey) {
      throw new MnemoError('the /v1/me surface needs an apiKey', { code: 'invalid_options' });
    }
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.prefix = `/v1/${this.surface}`;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function')
      throw new MnemoError('no fetch available', { code: 'invalid_options' });
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      token: options.apiKey ?? options.adminToken,
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
      fetch: fetchImpl.bind(globalThis),
      headers: options.headers ?? {},
      sleep: options.sleep ?? sleep,
    });
    const t = this.transport;
    this.memories = new MemoriesResource(t, this.prefix);
    this.banks = new BanksResource(t, this.prefix);
    this.entities = new EntitiesResource(t, this.prefix);
    this.spaces = new SpacesResource(t, this.prefix);
    this.operations = new OperationsResource(t, this.prefix);
    this.directives = new DirectivesResource(t, this.prefix);
    this.webhooks = new WebhooksResource(t, this.prefix);
    this.documents = new DocumentsResource(t, this.prefix);
    this.transfer = new TransferResource(t, this.prefix, this.operations);
    this.evaluations = new EvaluationsResource(t, this.prefix);
    this.mentalModels = new MentalModelsResource(t, this.prefix);
    this.receipts = new ReceiptsResource(t, this.prefix);
    this.audit = new AuditResource(t, this.prefix);
    this.bankAudit = new BankAuditResource(t, this.prefix);
    this.llmRequests = new LlmRequestsResource(t, this.prefix);
    this.templates = new TemplatesResource(t, this.prefix);
    this.projects = new ProjectsResource(t);
  }

  /** A written answer over everything the bank knows; a string is taken as the query. */
  reflect(bank: string, params: ReflectParams | string, options?: RequestOptions): Promise<ReflectResponse> {
    return reflect(this.transport, this.prefix, bank, params, options);
  }

  /** Liveness: `{status: 'ok'}`. */
  health(options?: RequestOptions): Promise<Health> {
    return this.transport.request('GET', '/health', { options });
  }

  /** Readiness: `{status: 'ready' | 'unavailable', engine}` (an unavailable database is not thrown). */
  async ready(options?: RequestOptions): Promise<Health> {
    try {
      return await this.transport.request<Health>('GET', '/health/ready', { options });
    } catch (err) {
      const body = err instanceof InternalServerError ? (err.body as Health | undefined) : undefined;
      if (err instanceof InternalServerError && err.status === 503 && body?.status) return body;
      throw err;
    }
  }

  /** `{api_version, version, features}`. */
  version(options?: RequestOptions): Promise<VersionInfo> {
    return this.transport.request('GET', '/version', { options });
  }
}
