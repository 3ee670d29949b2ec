import type { Scope } from './vocabulary.js';

/** What one action of the API needs and does. */
export interface ActionSpec {
  /** The scope a key needs; `operator` = the operator token only. */
  readonly scope: Scope | 'operator';
  /** Another scope that admits the action as well (a key needs one of the two). */
  readonly orScope?: Scope;
  /**
   * Changes nothing: not written to the audit trail (denials always are), its answer never kept
   * for an Idempotency-Key, and the SDK sends it no key, whatever the HTTP method (Recall and
   * Reflect are POSTs).
   */
  readonly read: boolean;
  /** Its answer holds a secret shown once: a retry under the same Idempotency-Key gets 409 `already_done`. */
  readonly secret?: true;
  /**
   * Addressed to no bank, yet open to a key limited to some banks because it answers only
   * those banks (the bank list, spaces, the audit trail), or checks each bank itself (`/mcp`:
   * every tool call does).
   * Every other action without a `{bank}` refuses such a key.
   */
  readonly bankFiltered?: true;
}

/**
 * Every action of the API: the audit trail's `action`, the scope a route and an MCP tool demand,
 * and whether it only reads. The one catalogue; routes, MCP tools, idempotency, audit and the SDK
 * read it.
 */
export const ACTIONS = {
  'memories.retain': { scope: 'retain', read: false },
  /** Retain's extraction on one item, stored nowhere (a model's tokens are still counted). */
  'memories.extract': { scope: 'retain', read: true },
  'memories.recall': { scope: 'recall', read: true },
  'memories.list': { scope: 'recall', read: true },
  'memories.get': { scope: 'recall', read: true },
  'memories.delete': { scope: 'retain', read: false },
  /** Curation: invalidate, restore or edit one memory. */
  'memories.update': { scope: 'retain', read: false },
  /** Deletes what consolidation derived from one memory and consolidates it again. */
  'memories.observations.clear': { scope: 'retain', read: false },
  /** Every memory of a bank (or of one fact type) at once. */
  'memories.clear': { scope: 'admin', read: false },
  reflect: { scope: 'recall', read: true },
  'banks.list': { scope: 'recall', read: true, bankFiltered: true },
  'banks.get': { scope: 'recall', read: true },
  'banks.upsert': { scope: 'admin', read: false },
  'banks.identity.update': { scope: 'admin', read: false },
  'banks.delete': { scope: 'admin', read: false },
  'banks.config.get': { scope: 'recall', read: true },
  /** Counts over a bank: statistics and memories over time. */
  'banks.stats': { scope: 'recall', read: true },
  'tags.list': { scope: 'recall', read: true },
  'banks.config.update': { scope: 'admin', read: false },
  /** One minimal, metered call to the model: changes nothing but the bank's token count. */
  'banks.llm.probe': { scope: 'admin', read: true },
  'entities.list': { scope: 'graph:read', read: true },
  'entities.get': { scope: 'graph:read', read: true },
  'entities.graph': { scope: 'graph:read', read: true },
  'graph.get': { scope: 'graph:read', read: true },
  'observations.consolidate': { scope: 'retain', read: false },
  'observations.list': { scope: 'recall', read: true },
  /** Deletes what consolidation wrote and rewinds it. */
  'observations.clear': { scope: 'admin', read: false },
  /**
   * Reading a bank's operations: a key that may queue one polls it, whether it queues writes
   * (`retain`: async Retain) or reads (`recall`: a document-transfer export); changing one needs retain.
   */
  'operations.list': { scope: 'retain', orScope: 'recall', read: true },
  'operations.get': { scope: 'retain', orScope: 'recall', read: true },
  'operations.cancel': { scope: 'retain', read: false },
  'operations.retry': { scope: 'retain', read: false },
  'operations.delete': { scope: 'retain', read: false },
  'documents.list': { scope: 'recall', read: true },
  'documents.get': { scope: 'recall', read: true },
  'documents.delete': { scope: 'retain', read: false },
  'documents.update': { scope: 'retain', read: false },
  /** Runs a document's extraction again from its kept source (an operation). */
  'documents.reprocess': { scope: 'retain', read: false },
  /** Uploaded files' text retained (plain text, Markdown, HTML, PDF; an operation per file). */
  'files.retain': { scope: 'retain', read: false },
  'directives.list': { scope: 'admin', read: true },
  'directives.get': { scope: 'admin', read: true },
  'directives.create': { scope: 'admin', read: false },
  'directives.update': { scope: 'admin', read: false },
  'directives.delete': { scope: 'admin', read: false },
  'webhooks.list': { scope: 'admin', read: true },
  /** Its answer shows the signing secret, once. */
  'webhooks.create': { scope: 'admin', read: false, secret: true },
  'webhooks.update': { scope: 'admin', read: false },
  'webhooks.delete': { scope: 'admin', read: false },
  'webhooks.deliveries': { scope: 'admin', read: true },
  /** Runs Recall over each case and keeps the run: it writes, so it is audited. */
  'evaluations.run': { scope: 'recall', read: false },
  'evaluations.list': { scope: 'recall', read: true },
  'evaluations.get': { scope: 'recall', read: true },
  'evaluations.delete': { scope: 'admin', read: false },
  'spaces.list': { scope: 'admin', read: true, bankFiltered: true },
  'mental_models.list': { scope: 'recall', read: true },
  'mental_models.get': { scope: 'recall', read: true },
  'mental_models.history': { scope: 'recall', read: true },
  'mental_models.create': { scope: 'admin', read: false },
  'mental_models.update': { scope: 'admin', read: false },
  'mental_models.delete': { scope: 'admin', read: false },
  /** Empties the content (kept in the history); the next refresh writes it afresh. */
  'mental_models.clear': { scope: 'admin', read: false },
  /** Queues a refresh: a Reflect over the source query, charged to the project like one. */
  'mental_models.refresh': { scope: 'retain', read: false },
  /** A refresh's Reflect run now and shown, stored nowhere (charged like a Reflect). */
  'mental_models.dry_run': { scope: 'recall', read: true },
  'spaces.create': { scope: 'admin', read: false },
  'spaces.delete': { scope: 'admin', read: false },
  'spaces.banks.list': { scope: 'admin', read: true, bankFiltered: true },
  'spaces.banks.attach': { scope: 'admin', read: false },
  'spaces.banks.remove': { scope: 'admin', read: false },
  'audit.list': { scope: 'admin', read: true, bankFiltered: true },
  /** A forget's signed receipt; a bank-scoped key sees those of its banks (checked by the receipt's bank). */
  'receipts.get': { scope: 'recall', read: true, bankFiltered: true },
  /** Checks a receipt's signature; changes nothing. */
  'receipts.verify': { scope: 'recall', read: true, bankFiltered: true },
  /** One bank's audit log and its counts over time (Hindsight's audit-logs). */
  'banks.audit.list': { scope: 'admin', read: true },
  'banks.audit.stats': { scope: 'admin', read: true },
  /** The model calls made for a bank (purpose, tokens, time, outcome; never text) and their counts. */
  'banks.llm_requests.list': { scope: 'admin', read: true },
  'banks.llm_requests.stats': { scope: 'admin', read: true },
  /** A bank's settings, mission and directives as a template manifest, and applying one. */
  'banks.template.export': { scope: 'admin', read: true },
  'banks.template.import': { scope: 'admin', read: false },
  /** Queues an export of the bank's documents as an archive (what `mnemo export` needs: recall). */
  'banks.transfer.export': { scope: 'recall', read: false },
  /** Queues the import of an uploaded archive: a Retain of its facts. */
  'banks.transfer.import': { scope: 'retain', read: false },
  /** An export's archive by its key; the key names its bank, checked against a bank-scoped key. */
  'files.download': { scope: 'recall', read: true, bankFiltered: true },
  'projects.list': { scope: 'operator', read: true },
  'projects.get': { scope: 'operator', read: true },
  'projects.create': { scope: 'operator', read: false },
  'projects.update': { scope: 'operator', read: false },
  'projects.delete': { scope: 'operator', read: false },
  'keys.list': { scope: 'operator', read: true },
  'keys.create': { scope: 'operator', read: false, secret: true },
  'keys.revoke': { scope: 'operator', read: false },
  /** A JSON-RPC exchange on `/mcp`; each tool call inside is audited under its own action. */
  mcp: { scope: 'mcp', read: false, bankFiltered: true },
} as const satisfies Record<string, ActionSpec>;

export type Action = keyof typeof ACTIONS;

/** Whether a key limited to some banks may call this action without naming a bank (see `bankFiltered`). */
export const bankFiltered = (action: Action): boolean =>
  (ACTIONS[action] as ActionSpec).bankFiltered === true;

/** The spec of an action named at run time (an unknown name has none). */
export const actionSpec = (name: string | undefined): ActionSpec | undefined =>
  name !== undefined && Object.hasOwn(ACTIONS, name) ? ACTIONS[name as Action] : undefined;

/**
 * Whether a key with these scopes may take an action a key may take at all (not an operator
 * one): it holds the action's scope or its `orScope`. `all` is the operator's (or the embedded
 * stdio server's) every scope. Routes and MCP tools both decide by it.
 */
export function scopesAdmit(spec: ActionSpec, scopes: ReadonlySet<Scope> | 'all'): boolean {
  if (scopes === 'all') return true;
  return (
    (spec.scope !== 'operator' && scopes.has(spec.scope)) ||
    (spec.orScope !== undefined && scopes.has(spec.orScope))
  );
}

/** The scope(s) an action needs, as a refusal names them: `'retain' or 'recall'`. */
export const scopesNeeded = (spec: ActionSpec): string =>
  `'${spec.scope}'${spec.orScope ? ` or '${spec.orScope}'` : ''}`;
