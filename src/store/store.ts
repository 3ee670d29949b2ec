/**
 * The store's interface: one narrow interface per concern, each declared at the top of the SQL
 * file that implements it (`sql/<concern>.ts`), and `Store`, their composition, which both
 * engines provide (`open.ts` assembles it). A caller that needs one concern takes that
 * interface; core modules import them all from here.
 */
import type { EngineMemory, PoolStats } from './db.js';
import type { KeywordMemoryStats } from './keyword-memory.js';
import type { AuditInput, AuditStore } from './sql/audit.js';
import type { AuditTransport, BankAuditStore } from './sql/bank-audit.js';
import type { BankIndexStore } from './sql/bank-index.js';
import type { LlmCallRecord, LlmRequestStore } from './sql/llm-requests.js';
import type { TemplateChange, TemplateStore } from './sql/templates.js';
import type { BankStore } from './sql/banks.js';
import type {
  ConversionStore,
  ConvertedEntity,
  ConvertedMemory,
  StoredMemoryFields,
} from './sql/conversion.js';
import type { CurationEvent, CurationOutcome, CurationStore, MemoryCuration } from './sql/curation.js';
import type { DirectiveStore } from './sql/directives.js';
import type { DocumentStore } from './sql/documents.js';
import type { BankKeyRecord, BankKeyStore } from './sql/encryption.js';
import type { EntityStore } from './sql/entities.js';
import type {
  EvaluationFigures,
  EvaluationStore,
  EvaluationSummary,
  NewEvaluation,
  StoredEvaluation,
} from './sql/evaluations.js';
import type { GraphStore } from './sql/graph.js';
import type { IntakeStore } from './sql/intake.js';
import type {
  CostCharge,
  CostCount,
  CostResult,
  ItemsCharge,
  LimitDefaults,
  LimitStore,
  RateCount,
} from './sql/limits.js';
import type { MemoryStore } from './sql/memories.js';
import type {
  MentalModelContent,
  MentalModelHistoryEntry,
  MentalModelPage,
  MentalModelPatch,
  MentalModelRecord,
  MentalModelStore,
  NewMentalModel,
} from './sql/mental-models.js';
import type { ObservationStore } from './sql/observations.js';
import type { ForgetSubject, ReceiptDraft, ReceiptRecord, ReceiptStore } from './sql/receipts.js';
import type { ChargeBack, IdempotencyStore, OperationCharge, OperationStore } from './sql/operations.js';
import type { Hit, SearchStore } from './sql/search.js';
import type { BankStatsRecord, StatsStore, TimeField } from './sql/stats.js';
import type { TenancyStore } from './sql/tenancy.js';
import type {
  NewTransferArchive,
  TransferArchiveRecord,
  TransferArchiveStore,
} from './sql/transfer-archives.js';
import type { UpkeepStore } from './sql/upkeep.js';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryAttempt,
  DeliveryStatus,
  WebhookDeliveryRecord,
  WebhookEvent,
  WebhookRecord,
  WebhookStore,
} from './sql/webhooks.js';
import type { StoredVector, VectorStore } from './sql/vectors.js';

export type { PayHops } from './sql/offset-walk.js';
/** Rows one statement of a walk reads at most: what a hop of a charged walk is. */
export { SKIP_PER_STATEMENT } from './sql/offset-walk.js';
export type {
  CurationEvent,
  CurationOutcome,
  CurationStore,
  MemoryCuration,
  AuditInput,
  AuditTransport,
  BankAuditStore,
  LlmRequestStore,
  TemplateChange,
  TemplateStore,
  BankStatsRecord,
  StatsStore,
  TimeField,
  AuditStore,
  BankIndexStore,
  BankKeyRecord,
  BankKeyStore,
  BankStore,
  ConversionStore,
  ConvertedEntity,
  ConvertedMemory,
  CostCharge,
  CostCount,
  CostResult,
  DirectiveStore,
  DocumentStore,
  EntityStore,
  EvaluationFigures,
  EvaluationStore,
  EvaluationSummary,
  GraphStore,
  Hit,
  IdempotencyStore,
  IntakeStore,
  ItemsCharge,
  LimitDefaults,
  LimitStore,
  LlmCallRecord,
  MemoryStore,
  MentalModelContent,
  MentalModelHistoryEntry,
  MentalModelPage,
  MentalModelPatch,
  MentalModelRecord,
  MentalModelStore,
  NewEvaluation,
  NewMentalModel,
  ObservationStore,
  OperationCharge,
  OperationStore,
  ChargeBack,
  RateCount,
  ForgetSubject,
  ReceiptDraft,
  ReceiptRecord,
  ReceiptStore,
  SearchStore,
  StoredEvaluation,
  StoredMemoryFields,
  StoredVector,
  TenancyStore,
  NewTransferArchive,
  TransferArchiveRecord,
  TransferArchiveStore,
  UpkeepStore,
  VectorStore,
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryAttempt,
  DeliveryStatus,
  WebhookDeliveryRecord,
  WebhookEvent,
  WebhookRecord,
  WebhookStore,
};

/**
 * Everything mnemo keeps. Two engines implement it with the same SQL (PGlite embedded,
 * PostgreSQL); core never sees SQL. Methods that take a bank assume the caller checked it
 * belongs to the project.
 */
export interface Store
  extends TenancyStore,
    BankStore,
    MemoryStore,
    CurationStore,
    DocumentStore,
    IntakeStore,
    EntityStore,
    SearchStore,
    BankIndexStore,
    VectorStore,
    ObservationStore,
    DirectiveStore,
    OperationStore,
    IdempotencyStore,
    LimitStore,
    BankKeyStore,
    ConversionStore,
    AuditStore,
    BankAuditStore,
    LlmRequestStore,
    TemplateStore,
    EvaluationStore,
    StatsStore,
    GraphStore,
    UpkeepStore,
    WebhookStore,
    ReceiptStore,
    TransferArchiveStore,
    MentalModelStore {
  readonly engine: 'pglite' | 'postgres';
  /** The engine gone for good, if it can be (`Db.lost`). */
  readonly lost?: Promise<Error>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connection pool use (PostgreSQL), null for the embedded engine. */
  poolStats(): PoolStats | null;
  /** Memory of the embedded engine inside this process; null on PostgreSQL. */
  engineMemory(): Promise<EngineMemory | null>;
  /** The banks' postings copied into this process for keyword search (`keyword-memory.ts`); null when off. */
  keywordMemoryStats(): KeywordMemoryStats | null;
  /**
   * Runs `fn` over a read-only snapshot: every query inside sees the same committed state, so a
   * document replaced meanwhile shows either its old or its new memories, never a mix.
   */
  readSnapshot<T>(fn: (store: Store) => Promise<T>): Promise<T>;
}
