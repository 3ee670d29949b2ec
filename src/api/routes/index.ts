import type { Hono } from 'hono';
import type { AppEnv } from '../env.js';
import { auditRoutes } from './audit.js';
import { bankListRoutes } from './bank-list.js';
import { bankUpkeepRoutes, chunkRoutes } from './bank-upkeep.js';
import { bankRoutes } from './banks.js';
import { directiveRoutes } from './directives.js';
import { documentRoutes } from './documents.js';
import { evaluationRoutes } from './evaluations.js';
import { extractRoutes } from './extract.js';
import { fileRoutes } from './files.js';
import { graphRoutes } from './graph.js';
import { hindsightRoutes } from './hindsight.js';
import { ledgerRoutes } from './ledgers.js';
import { mcpRoutes } from './mcp.js';
import { memoryRoutes } from './memories.js';
import { mentalModelRoutes } from './mental-models.js';
import { operationRecordRoutes } from './operation-records.js';
import { operationRoutes } from './operations.js';
import { projectRoutes } from './projects.js';
import { receiptRoutes } from './receipts.js';
import { reflectRoutes } from './reflect.js';
import { spaceRoutes } from './spaces.js';
import { statsRoutes } from './stats.js';
import { webhookRoutes } from './webhooks.js';
import { templateRoutes } from './templates.js';
import { transferRoutes } from './transfer.js';

/** The routers of a project's banks, served under `/v1/me` (a project key) and `/v1/default`. */
const BANK_ROUTERS = [
  memoryRoutes,
  fileRoutes,
  bankListRoutes,
  bankRoutes,
  spaceRoutes,
  auditRoutes,
  reflectRoutes,
  directiveRoutes,
  operationRoutes,
  operationRecordRoutes,
  documentRoutes,
  evaluationRoutes,
  hindsightRoutes,
  statsRoutes,
  graphRoutes,
  extractRoutes,
  bankUpkeepRoutes,
  chunkRoutes,
  webhookRoutes,
  receiptRoutes,
  mentalModelRoutes,
  ledgerRoutes,
  templateRoutes,
  transferRoutes,
];

/**
 * Every router whose routes are guarded by an action of the catalogue, with the path it is
 * mounted under, in mounting order. `createApp` mounts exactly these; `npm run docs` lists their
 * routes with the scope each needs.
 */
export const GUARDED_MOUNTS: readonly (readonly [base: string, routes: Hono<AppEnv, any, any>])[] = [
  ...['/v1/me', '/v1/default'].flatMap((base) => BANK_ROUTERS.map((r) => [base, r] as const)),
  ['/v1/default', projectRoutes],
  ['/mcp', mcpRoutes],
];
