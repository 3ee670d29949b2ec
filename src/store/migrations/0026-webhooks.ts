import type { Migration } from './migration.js';

export default {
  version: 26,
  name: 'webhooks: per-bank webhooks and their durable deliveries',
  sql: `
-- A bank's webhooks. The secret and the HTTP configuration (custom headers may carry credentials)
-- are text: sealed with the bank's data key whenever a master key is configured, which their
-- prefix shows, like a directive's text.
CREATE TABLE webhooks (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  url text NOT NULL,
  secret text,
  event_types text[] NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  http_config text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);

-- One row per event to deliver to one webhook, written when the event happens and claimed by
-- any process's worker (FOR UPDATE SKIP LOCKED, then a lease in locked_until). event_key names
-- the event (operation and item): an event recorded twice (a re-run after a crash) is one
-- delivery. body is the exact JSON that is signed and sent; sealed in an encrypted bank.
-- attempt_log keeps every attempt's outcome (bounded by the maximum number of attempts).
CREATE TABLE webhook_deliveries (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  webhook_id uuid NOT NULL,
  event_type text NOT NULL,
  event_key text NOT NULL,
  url text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_by text,
  locked_until timestamptz,
  last_error text,
  last_response_status integer,
  last_response_body text,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  attempt_log jsonb NOT NULL DEFAULT '[]',
  seq bigserial NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  UNIQUE (project_id, bank_id, webhook_id, event_key),
  FOREIGN KEY (project_id, bank_id, webhook_id) REFERENCES webhooks(project_id, bank_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_listing ON webhook_deliveries (project_id, bank_id, webhook_id, seq DESC);
`,
} satisfies Migration;
