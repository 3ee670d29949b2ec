import type { Migration } from './migration.js';

export default {
  version: 7,
  name: 'language model usage per bank',
  sql: `
ALTER TABLE banks ADD COLUMN llm_input_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE banks ADD COLUMN llm_output_tokens bigint NOT NULL DEFAULT 0;
`,
} satisfies Migration;
