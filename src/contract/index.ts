/**
 * The wire contract of mnemo: every request and response schema, the error codes, scopes and
 * actions. It imports nothing but zod (a test checks the boundary), so the server, MCP tools,
 * CLI and the SDK (which bundles it) share one definition.
 */
export * from './actions.js';
export * from './audit-logs.js';
export * from './bank-config.js';
export * from './bank-upkeep.js';
export * from './banks.js';
export * from './common.js';
export * from './directives.js';
export * from './documents.js';
export * from './error-meanings.js';
export * from './evaluations.js';
export * from './extract.js';
export * from './files.js';
export * from './graph.js';
export * from './health.js';
export * from './llm-requests.js';
export * from './memories.js';
export * from './mental-models.js';
export * from './operations.js';
export * from './projects.js';
export * from './receipts.js';
export * from './reflect.js';
export * from './spaces.js';
export * from './stats.js';
export * from './templates.js';
export * from './vocabulary.js';
export * from './webhooks.js';
export * from './names.js';
export * from './transfer.js';
