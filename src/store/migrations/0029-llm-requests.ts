import type { Migration } from './migration.js';

export default {
  version: 29,
  name: 'llm requests: one row per language model call, the newest of each bank kept',
  sql: `
-- Every model call made for a bank: what it was for, which model, tokens, time and outcome.
-- Never the prompt or the answer (an encrypted bank's text stays sealed). seq numbers a bank's
-- calls (banks.llm_request_seq, advanced under the bank's row lock by the statement that adds
-- the calls' tokens to the bank's usage), so keeping the newest N is one range delete.
ALTER TABLE banks ADD COLUMN llm_request_seq bigint NOT NULL DEFAULT 0;
CREATE TABLE llm_requests (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  seq bigint NOT NULL,
  started_at timestamptz NOT NULL,
  operation text NOT NULL,
  scope text NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  status text NOT NULL,
  error text,
  duration_ms integer NOT NULL,
  input_tokens integer NOT NULL,
  output_tokens integer NOT NULL,
  trace_id text,
  PRIMARY KEY (project_id, bank_id, seq),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX llm_requests_started ON llm_requests (project_id, bank_id, started_at);
`,
} satisfies Migration;
