import { SCOPES, type Scope } from '../contract/vocabulary.js';
import type { FactType } from '../text/fact-type.js';

export type { FactType };

/** Who is acting: the operator (admin token) or an API key of a project. */
export interface Actor {
  type: 'operator' | 'key' | 'anonymous';
  keyId?: string;
}

export { SCOPES, type Scope };

// The stored records are declared by the store (store/records.ts); core names them from here.
export type {
  Project,
  ProjectLimits,
  BudgetName,
  ApiKeyRecord,
  Space,
  Bank,
  BankCounts,
  EntityInput,
  NewMemory,
  Memory,
  MemoryState,
  Entity,
  TagsMatch,
  MemoryFilter,
  AuditEntry,
  Page,
  OperationStatus,
  Operation,
  IdempotencyScope,
  IdempotentReply,
  IdempotencyClaim,
  Directive,
  ObservationRelation,
  ObservationDetail,
  ConsolidationSource,
  ObservationChange,
  DocumentRecord,
} from '../store/records.js';
