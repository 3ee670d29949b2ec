/**
 * Every migration, in the order they apply. A new migration is a new file named after the next
 * version (`0020-what-it-does.ts`), imported and appended here; see docs/development.md.
 */
import m0001 from './0001-init.js';
import m0002 from './0002-operations-idempotency.js';
import m0003 from './0003-directives-observations.js';
import m0004 from './0004-rate-counters.js';
import m0005 from './0005-managed-encryption.js';
import m0006 from './0006-recall-indexes.js';
import m0007 from './0007-llm-usage.js';
import m0008 from './0008-keyword-document-length.js';
import m0009 from './0009-long-spans.js';
import m0010 from './0010-bank-generation.js';
import m0011 from './0011-keyword-covering-index.js';
import m0012 from './0012-keyword-impact-order.js';
import m0013 from './0013-keyword-phase-two.js';
import m0014 from './0014-idempotency-per-caller.js';
import m0015 from './0015-sealed-vectors.js';
import m0016 from './0016-entity-keys.js';
import m0018 from './0018-fair-claims.js';
import m0019 from './0019-audit-refusals.js';
import m0020 from './0020-nfc-ids.js';
import m0022 from './0022-evaluations.js';
import m0025 from './0025-key-banks.js';
import m0026 from './0026-webhooks.js';
import m0027 from './0027-mental-models.js';
import m0028 from './0028-forget-receipts.js';
import m0029 from './0029-llm-requests.js';
import m0030 from './0030-audit-per-bank.js';
import m0032 from './0032-temporal-ends.js';
import m0033 from './0033-transfer-archives.js';
import m0034 from './0034-document-sources.js';
import m0035 from './0035-memory-curation.js';
import m0036 from './0036-operation-payload-parts.js';
import m0037 from './0037-long-spans-by-end.js';
import m0039 from './0039-retired-postings.js';
import m0041 from './0041-fair-webhook-claims.js';
import m0042 from './0042-keyword-driver-pair.js';
import m0044 from './0044-memories-by-type.js';
import m0045 from './0045-listing-orders.js';
import m0046 from './0046-bank-counters.js';
import m0047 from './0047-space-bank-counts.js';
import m0048 from './0048-operation-charges.js';
import m0052 from './0052-keyword-phase-two-lookups.js';
import m0053 from './0053-keyword-generic-plan.js';
import m0054 from './0054-keyword-whole-short-postings.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0005,
  m0006,
  m0007,
  m0008,
  m0009,
  m0010,
  m0011,
  m0012,
  m0013,
  m0014,
  m0015,
  m0016,
  m0018,
  m0019,
  m0020,
  m0022,
  m0025,
  m0026,
  m0027,
  m0028,
  m0029,
  m0030,
  m0032,
  m0033,
  m0034,
  m0035,
  m0036,
  m0037,
  m0039,
  m0041,
  m0042,
  m0044,
  m0045,
  m0046,
  m0047,
  m0048,
  m0052,
  m0053,
  m0054,
];

/** The newest schema version this code knows. */
export const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0;
