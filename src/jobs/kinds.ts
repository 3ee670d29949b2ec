import { CONSOLIDATE, runConsolidateOperation } from '../core/consolidate/schedule.js';
import { runReencryptOperation } from '../core/crypto/reencrypt.js';
import { runRefreshOperation } from '../core/mental-model-refresh.js';
import { REFRESH_MENTAL_MODEL } from '../contract/mental-models.js';
import { BANK_INDEX, runBankIndexOperation } from '../core/recall/bank-index.js';
import { REEMBED, runReembedOperation } from '../core/reembed.js';
import type { OperationRunner } from '../core/operations.js';
import { runRetainOperation } from '../core/retain/retain-async.js';
import { EXPORT_DOCUMENTS, runExportOperation } from '../core/transfer/export.js';
import { IMPORT_DOCUMENTS, runImportOperation } from '../core/transfer/import.js';

/** Every operation kind a worker can run. Add a line per kind. */
export const OPERATION_RUNNERS: Record<string, OperationRunner> = {
  retain: runRetainOperation,
  [CONSOLIDATE]: runConsolidateOperation,
  reencrypt: runReencryptOperation,
  [REEMBED]: runReembedOperation,
  [BANK_INDEX]: runBankIndexOperation,
  [REFRESH_MENTAL_MODEL]: runRefreshOperation,
  [EXPORT_DOCUMENTS]: runExportOperation,
  [IMPORT_DOCUMENTS]: runImportOperation,
};
