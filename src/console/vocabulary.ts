/**
 * The words of the wire contract the console shows and sends, taken from `src/contract` and
 * served to the console as an ES module (`/console/assets/vocabulary.js`), so its menus, filters
 * and checkboxes cannot drift from what the API accepts. The console's own words for them
 * (labels, hints) live in `assets/labels.js`, keyed by these values;
 * `src/console/vocabulary.test.ts` fails when a label is missing or names a value the contract
 * does not have, or when an asset lists the contract's words itself.
 */
import { ACTIONS, type Action } from '../contract/actions.js';
import { BANK_CONFIG_SCHEMA } from '../contract/bank-config.js';
import { Disposition } from '../contract/banks.js';
import { BudgetSchema, TagsMatchSchema } from '../contract/common.js';
import { EVALUATION_CHANNELS } from '../contract/evaluations.js';
import { StageScores } from '../contract/memories.js';
import { CANCELLABLE_WHILE_RUNNING, OperationRecord } from '../contract/operations.js';
import { FACT_TYPES, SCOPES } from '../contract/vocabulary.js';

export const CONSOLE_VOCABULARY = {
  /** Kinds of memory (type filters, Recall's and Reflect's type checkboxes). */
  FACT_TYPES,
  /** What an API key may do (the key form). */
  SCOPES,
  /** How tags filter (memories, Recall, Reflect). */
  TAGS_MATCH: TagsMatchSchema.options,
  /** Recall's and Reflect's budget. */
  BUDGETS: BudgetSchema.options,
  /** Statuses of a background operation (the operations filter). */
  OPERATION_STATUSES: OperationRecord.shape.status.options,
  /**
   * Kinds of operation the API cancels while they run, not only pending (the operations' Cancel
   * button), so the button is offered exactly where the API does not answer 409.
   */
  RUNNING_CANCELLABLE_KINDS: CANCELLABLE_WHILE_RUNNING,
  /** Recall's per-stage scores, in the contract's order (results and `min_scores`). */
  SCORE_STAGES: Object.keys(StageScores.shape),
  /** Recall's channels an evaluation measures alone. */
  EVALUATION_CHANNELS,
  /** A bank's disposition traits (1–5 each). */
  DISPOSITION_TRAITS: Object.keys(Disposition.shape),
  /** A bank's configuration keys. */
  CONFIG_KEYS: Object.keys(BANK_CONFIG_SCHEMA.shape),
  /** Actions the audit trail records (those that change something), for the audit filter. */
  AUDITED_ACTIONS: (Object.keys(ACTIONS) as Action[]).filter((a) => !ACTIONS[a].read),
} as const satisfies Record<string, readonly string[]>;

/** `CONSOLE_VOCABULARY` as the ES module the console imports. */
export const VOCABULARY_MODULE = [
  '// Served by mnemo from its wire contract (src/console/vocabulary.ts): not a file to edit.',
  ...Object.entries(CONSOLE_VOCABULARY).map(
    ([name, words]) => `export const ${name} = Object.freeze(${JSON.stringify(words)});`,
  ),
  '',
].join('\n');
