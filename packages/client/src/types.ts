/**
 * Request and response types, derived from the contract's zod schemas (`src/contract`, bundled
 * into the package by the build). These are type-only imports: they vanish at compile time, so
 * the client needs no zod at run time; its `.d.ts` files need zod's types (a dependency).
 */
import type { z } from 'zod';
import type * as AuditLogs from '../../../src/contract/audit-logs.js';
import type * as Banks from '../../../src/contract/banks.js';
import type * as Upkeep from '../../../src/contract/bank-upkeep.js';
import type * as Directives from '../../../src/contract/directives.js';
import type * as Documents from '../../../src/contract/documents.js';
import type * as Evaluations from '../../../src/contract/evaluations.js';
import type * as Extract from '../../../src/contract/extract.js';
import type * as Files from '../../../src/contract/files.js';
import type * as Graph from '../../../src/contract/graph.js';
import type * as LlmRequests from '../../../src/contract/llm-requests.js';
import type * as Memories from '../../../src/contract/memories.js';
import type * as MentalModels from '../../../src/contract/mental-models.js';
import type * as Operations from '../../../src/contract/operations.js';
import type * as Projects from '../../../src/contract/projects.js';
import type * as Receipts from '../../../src/contract/receipts.js';
import type * as Reflecting from '../../../src/contract/reflect.js';
import type * as Spaces from '../../../src/contract/spaces.js';
import type * as Stats from '../../../src/contract/stats.js';
import type * as Webhooks from '../../../src/contract/webhooks.js';
import type * as Templates from '../../../src/contract/templates.js';
import type * as Transfer from '../../../src/contract/transfer.js';

// Memories
export type FactType = z.output<typeof Memories.MemoryRecord>['type'];
export type TagsMatch = NonNullable<z.input<typeof Memories.RecallBody>['tags_match']>;
export type Budget = NonNullable<z.input<typeof Memories.RecallBody>['budget']>;
export type RetainItem = z.input<typeof Memories.RetainItem>;
/** The Retain body, plus `space` (sent as `?space=`) to attach a new bank to a space. */
export type RetainParams = z.input<typeof Memories.RetainBody> & { space?: string };
export type RetainResponse = z.output<typeof Memories.RetainResponse>;
export type AsyncRetainResponse = z.output<typeof Operations.AsyncRetainResponse>;
export type RecallParams = z.input<typeof Memories.RecallBody>;
export type RecallResponse = z.output<typeof Memories.RecallResponse>;
export type RecallResult = RecallResponse['results'][number];
export type Memory = z.output<typeof Memories.MemoryRecord>;
export type DeletedMemory = z.output<typeof Memories.DeletedMemory>;
export type UpdateMemoryParams = z.input<typeof Memories.MemoryPatchBody>;
export type ClearedMemoryObservations = z.output<typeof Memories.ClearedMemoryObservations>;

/** Filters of the memory listing; `tags` may be an array (sent comma-separated). */
export interface ListMemoriesParams {
  limit?: number;
  cursor?: string;
  type?: FactType;
  tags?: string[] | string;
  tags_match?: TagsMatch;
  document_id?: string;
  q?: string;
}

// Reflect
export type ReflectParams = z.input<typeof Reflecting.ReflectBody>;
export type ReflectResponse = z.output<typeof Reflecting.ReflectResponse>;
/** Name and mission (the identity Reflect speaks with); `null` clears a field. */
export type BankIdentity = z.input<typeof Reflecting.IdentityBody>;
export type ConsolidateResponse = z.output<typeof Reflecting.ConsolidateResponse>;

// Banks and entities
export type BankProfile = z.output<typeof Banks.BankProfile>;
export type BankConfig = z.output<typeof Banks.BankConfigView>;
export type BankConfigValues = z.output<typeof Banks.BankConfigValues>;
/** Config keys to set; `null` resets a key to its default. */
export type BankConfigUpdates = { [K in keyof BankConfigValues]?: BankConfigValues[K] | null };
export type DeletedBank = z.output<typeof Banks.DeletedBank>;
/**
 * The signed account of a deletion (memory, document or bank) and of everything derived from it
 * that went with it: ids and counts, never content. Every delete result carries one as `receipt`.
 */
export type Receipt = z.output<typeof Receipts.Receipt>;
/** A receipt as held, sent back to be checked. */
export type VerifyReceiptParams = z.input<typeof Receipts.VerifyReceiptBody>;
/** Whether the server signed the receipt as given (`reason` says why not). */
export type ReceiptVerdict = z.output<typeof Receipts.ReceiptVerdict>;
export interface ListBanksParams extends PageParams {
  /** Only the banks of this space. */
  space?: string;
  /** Only the banks whose id contains this text (any case). */
  q?: string;
}

// Counts and browsing
export type BankStats = z.output<typeof Stats.BankStatsResponse>;
export type TimeseriesParams = z.output<typeof Stats.TimeseriesQuery>;
export type MemoriesTimeseries = z.output<typeof Stats.TimeseriesResponse>;
export type ListTagsParams = z.output<typeof Stats.TagQuery>;
export type TagPage = z.output<typeof Stats.TagPage>;
export type EntityDetail = z.output<typeof Graph.EntityDetail>;
export type EntityGraphParams = z.output<typeof Graph.EntityGraphQuery>;
export type EntityGraph = z.output<typeof Graph.EntityGraph>;
export type MemoryGraphParams = z.output<typeof Graph.MemoryGraphQuery>;
export type MemoryGraph = z.output<typeof Graph.MemoryGraph>;
export type MemoryHistory = z.output<typeof Graph.MemoryHistory>;
export type ChunkPage = z.output<typeof Graph.ChunkPage>;
export type Chunk = z.output<typeof Graph.Chunk>;
export type DryRunExtractParams = z.input<typeof Extract.DryRunExtractBody>;
export type DryRunExtractResult = z.output<typeof Extract.DryRunExtractResult>;
export type ClearedMemories = z.output<typeof Upkeep.ClearedMemories>;
export type ClearedObservations = z.output<typeof Upkeep.ClearedObservations>;
export type ObservationScopes = z.output<typeof Upkeep.ObservationScopes>;
export type UpdatedDocument = z.output<typeof Upkeep.DocumentTagsResult>;
export type LlmHealth = z.output<typeof Upkeep.LlmHealth>;
/**
 * The body of `PUT /banks/{bank}` (create or update; Hindsight's shape): identity and config in
 * one call.
 */
export interface UpsertBankParams {
  name?: string | null;
  mission?: string | null;
  disposition?: { skepticism: number; literalism: number; empathy: number } | null;
  [configKey: string]: unknown;
}
export type Entity = z.output<typeof Banks.EntityRecord>;
export interface PageParams {
  limit?: number;
  cursor?: string;
}

// Spaces
export type Space = z.output<typeof Spaces.SpaceRecord>;
export type CreateSpaceParams = z.input<typeof Spaces.CreateSpaceBody>;
export type Attachment = z.output<typeof Spaces.Attachment>;
export type DeletedSpace = z.output<typeof Spaces.DeletedSpace>;

// Audit
export type AuditEntry = z.output<typeof Projects.AuditRecord>;
export interface AuditListParams extends PageParams {
  bank?: string;
  action?: string;
  since?: string;
  until?: string;
}

// Projects and keys (operator)
export type Project = z.output<typeof Projects.ProjectRecord>;
/** Request limits, quotas and cost budgets (`null` = unlimited; left out = the server default). */
export type ProjectLimits = z.output<typeof Projects.Limits>;
export type ProjectWithUsage = z.output<typeof Projects.ProjectWithUsage>;
export type ProjectUsage = z.output<typeof Projects.ProjectUsage>;
/** Counts of the cost budgets in their current windows. */
export type BudgetUsage = z.output<typeof Projects.BudgetUsage>;
export type CreateProjectParams = z.input<typeof Projects.CreateProjectBody>;
export type UpdateProjectParams = z.input<typeof Projects.PatchProjectBody>;
export type ApiKey = z.output<typeof Projects.KeyRecord>;
export type CreatedApiKey = z.output<typeof Projects.CreatedKey>;
export type CreateKeyParams = z.input<typeof Projects.CreateKeyBody>;
export type Scope = ApiKey['scopes'][number];

// Operations
export type Operation = z.output<typeof Operations.OperationRecord>;
export type OperationStatus = Operation['status'];
export interface ListOperationsParams extends PageParams {
  status?: OperationStatus;
}

// Document transfer
/** The answer of an export's or import's submission (202): the queued operation. */
export type TransferSubmitted = z.output<typeof Transfer.TransferSubmitted>;
/** A finished export's `result_metadata`: its archive's download. */
export type TransferExportResult = z.output<typeof Transfer.TransferExportResult>;
/** A finished import's `result_metadata`: what it stored and skipped. */
export type TransferImportResult = z.output<typeof Transfer.TransferImportResult>;
/** What an imported document id the bank holds already becomes. */
export type TransferOnConflict = NonNullable<z.input<typeof Transfer.TransferImportQuery>['on_conflict']>;
/** An export's or import's operation: its `result_metadata` once completed (narrow with `in`). */
export type TransferOperation = Omit<Operation, 'result_metadata'> & {
  result_metadata: TransferExportResult | TransferImportResult | null;
};

// Directives
export type Directive = z.output<typeof Directives.DirectiveRecord>;
export type CreateDirectiveParams = z.input<typeof Directives.CreateDirectiveBody>;
export type UpdateDirectiveParams = z.input<typeof Directives.UpdateDirectiveBody>;
export type DeletedDirective = z.output<typeof Directives.DeletedDirective>;

// Mental models
export type MentalModel = z.output<typeof MentalModels.MentalModelRecord>;
export type MentalModelList = z.output<typeof MentalModels.MentalModelList>;
export type MentalModelDetail = NonNullable<z.input<typeof MentalModels.MentalModelQuery>['detail']>;
export interface ListMentalModelsParams {
  tags?: string[];
  tags_match?: NonNullable<z.input<typeof MentalModels.MentalModelListQuery>['tags_match']>;
  detail?: MentalModelDetail;
  limit?: number;
  offset?: number;
}
export type CreateMentalModelParams = z.input<typeof MentalModels.CreateMentalModelBody>;
export type UpdateMentalModelParams = z.input<typeof MentalModels.UpdateMentalModelBody>;
export type CreatedMentalModel = z.output<typeof MentalModels.CreatedMentalModel>;
export type DeletedMentalModel = z.output<typeof MentalModels.DeletedMentalModel>;
export type MentalModelHistoryEntry = z.output<typeof MentalModels.MentalModelHistoryEntry>;
export type MentalModelRefreshQueued = z.output<typeof MentalModels.MentalModelRefreshQueued>;
export type MentalModelDryRun = z.output<typeof MentalModels.MentalModelDryRun>;
// Webhooks
export type Webhook = z.output<typeof Webhooks.WebhookOut>;
export type CreateWebhookParams = z.input<typeof Webhooks.CreateWebhookBody>;
export type UpdateWebhookParams = z.input<typeof Webhooks.UpdateWebhookBody>;
export type DeletedWebhook = z.output<typeof Webhooks.DeletedWebhook>;
export type WebhookDelivery = z.output<typeof Webhooks.WebhookDeliveryOut>;

// Evaluations
export type RunEvaluationParams = z.input<typeof Evaluations.RunEvaluationBody>;
export type EvaluationCase = z.input<typeof Evaluations.EvaluationCase>;
export type Evaluation = z.output<typeof Evaluations.EvaluationRecord>;
export type EvaluationSummary = z.output<typeof Evaluations.EvaluationSummary>;
export type EvaluationCaseOutcome = z.output<typeof Evaluations.EvaluationCaseOutcome>;
export type EvaluationFigures = z.output<typeof Evaluations.EvaluationFigures>;
export type DeletedEvaluation = z.output<typeof Evaluations.DeletedEvaluation>;

// Documents
export type DocumentSummary = z.output<typeof Documents.DocumentSummary>;
export type Document = z.output<typeof Documents.DocumentDetail>;
export type DeletedDocument = z.output<typeof Documents.DeletedDocument>;
export type ReprocessDocumentResponse = z.output<typeof Files.ReprocessResponse>;
export type FileRetainResponse = z.output<typeof Files.FileRetainResponse>;
export type FileMetadata = z.input<typeof Files.FileMetadata>;
export interface ListDocumentsParams {
  limit?: number;
  offset?: number;
}

// The contract's vocabulary
/** The stable `code` of an API error (`err.code`; the client's own errors add a few, e.g. `timeout`). */
export type { ErrorCode } from '../../../src/contract/vocabulary.js';
/** An action of the API, as the audit trail names it. */
export type { Action } from '../../../src/contract/actions.js';

// Service
export interface Health {
  status: string;
  engine?: string;
}
export interface VersionInfo {
  api_version: string;
  version: string;
  /** Feature flags, e.g. `{spaces: true, async_operations: true}`. */
  features: Record<string, boolean>;
}

// A bank's audit log, model calls and template
export type AuditLogListParams = z.output<typeof AuditLogs.AuditLogQuery>;
export type AuditLogEntry = z.output<typeof AuditLogs.AuditLogEntry>;
export type AuditLogList = z.output<typeof AuditLogs.AuditLogList>;
export type AuditLogStatsParams = z.output<typeof AuditLogs.AuditLogStatsQuery>;
export type AuditLogStats = z.output<typeof AuditLogs.AuditLogStats>;
export type LlmRequestListParams = z.output<typeof LlmRequests.LlmRequestQuery>;
export type LlmRequestEntry = z.output<typeof LlmRequests.LlmRequestEntry>;
export type LlmRequestList = z.output<typeof LlmRequests.LlmRequestList>;
export type LlmRequestStatsParams = z.output<typeof LlmRequests.LlmRequestStatsQuery>;
export type LlmRequestStats = z.output<typeof LlmRequests.LlmRequestStats>;
export type BankTemplateManifest = z.input<typeof Templates.BankTemplateManifest>;
export type BankTemplateImportResult = z.output<typeof Templates.BankTemplateImportResponse>;
