/**
 * The console's own words for the contract's vocabulary (`vocabulary.js`, which the server
 * builds from src/contract): labels and hints keyed by the contract's values. The lists
 * themselves come from vocabulary.js; src/console/vocabulary.test.ts fails when a key here is
 * missing or is not one of the contract's.
 */

/** What each scope lets a key do (the key form). Keys: SCOPES. */
export const SCOPE_LABELS = {
  retain: 'Retain and delete memories',
  recall: 'Recall, Reflect, list memories, bank profile',
  'graph:read': 'Entities and graph',
  mcp: 'The /mcp endpoint',
  admin: 'Spaces, config, directives, delete bank, audit',
};

/** Keys: TAGS_MATCH. */
export const TAGS_MATCH_LABELS = {
  any: 'any (or untagged)',
  all: 'all (or untagged)',
  any_strict: 'any, tagged only',
  all_strict: 'all, tagged only',
  exact: 'exactly these',
};

/** The badge kind of each operation status. Keys: OPERATION_STATUSES. */
export const OPERATION_STATUS_KINDS = {
  pending: 'info',
  processing: 'info',
  completed: 'ok',
  failed: 'error',
  cancelled: 'muted',
};

/** Each disposition trait's name and the words for its two ends. Keys: DISPOSITION_TRAITS. */
export const DISPOSITION_LABELS = {
  skepticism: ['Skepticism', 'trusting', 'skeptical'],
  literalism: ['Literalism', 'reads between the lines', 'literal'],
  empathy: ['Empathy', 'matter-of-fact', 'warm'],
};

/** A hint under each bank config field. Keys: CONFIG_KEYS. */
export const CONFIG_HINTS = {
  retain_extraction_mode: 'How Retain turns content into memories.',
  retain_auto_entities: 'Detect entities in retained text automatically.',
  retain_custom_instructions: 'Extraction instructions for the custom mode. Empty: none.',
  retain_mission: 'What Retain should focus on when it extracts memories.',
  retain_chunk_size: 'Characters per chunk in chunks mode. Empty: the server default.',
  reflect_mission: 'What Reflect answers should serve.',
  enable_observations: 'Consolidate memories into observations in the background.',
  observations_mission: 'What consolidated observations should capture.',
  encryption: 'managed encrypts memory text at rest (needs MNEMO_MASTER_KEY on the server).',
  enable_temporal_retrieval: 'Recall stage: memories near the time the query mentions.',
  enable_graph_retrieval: 'Recall stage: memories linked through shared entities.',
  enable_reranking: 'Recall stage: rerank the fused candidates.',
  disposition_skepticism: '1–5 (default 3).',
  disposition_literalism: '1–5 (default 3).',
  disposition_empathy: '1–5 (default 3).',
  recall_default_budget: 'Budget of a Recall that names none.',
};
