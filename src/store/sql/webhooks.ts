import type { Page } from '../records.js';
import type { Db } from '../db.js';
import { fencedWrite } from '../fence.js';
import { decodeCursor, encodeCursor } from './filters.js';

/** A bank's webhook as stored: `secret` and `http_config` (JSON) may be sealed. */
export interface WebhookRecord {
  id: string;
  bank_id: string;
  url: string;
  secret: string | null;
  event_types: string[];
  enabled: boolean;
  /** JSON of the HTTP configuration (method, timeout, headers, query parameters). */
  http_config: string;
  created_at: Date;
  updated_at: Date;
}

/** One attempt to deliver an event, as the deliveries log lists it. */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  /** `delivered`, or `failed` (a retry follows unless it was the last attempt). */
  outcome: 'delivered' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery as the deliveries log shows it (without its body). */
export interface WebhookDeliveryRecord {
  id: string;
  webhook_id: string;
  url: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  last_response_status: number | null;
  last_response_body: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  attempt_log: DeliveryAttempt[];
  created_at: Date;
  updated_at: Date;
}

/** An event to deliver to every enabled webhook of the bank subscribed to its type. */
export interface WebhookEvent {
  eventType: string;
  /** Names the event within the bank: recording it again (a re-run) adds no delivery. */
  eventKey: string;
  /** The exact JSON sent (sealed in an encrypted bank). */
  body: string;
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  projectId: string;
  bankId: string;
  id: string;
  webhookId: string;
  eventType: string;
  body: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  webhook: { url: string; secret: string | null; http_config: string; enabled: boolean };
}

/** The outcome of one attempt, recorded by the worker that holds the delivery's lease. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  /** When `pending`: the wait before the next attempt. */
  retryInMs?: number;
  url: string;
  attempt: DeliveryAttempt;
  responseBody: string | null;
}

/** Webhooks of a bank and their durable deliveries. */
export interface WebhookStore {
  /** A bank's webhooks, oldest first. */
  listWebhooks(projectId: string, bankId: string): Promise<WebhookRecord[]>;
  getWebhook(projectId: string, bankId: string, id: string): Promise<WebhookRecord | null>;
  /**
   * Inserts a webhook unless the bank holds `max` already (null then): counted and inserted under
   * the bank's row lock, so concurrent inserts cannot pass the limit together.
   */
  insertWebhook(
    projectId: string,
    bankId: string,
    w: {
      id: string;
      url: string;
      secret: string | null;
      event_types: string[];
      enabled: boolean;
      http_config: string;
    },
    max: number,
  ): Promise<WebhookRecord | null>;
  /** Fields left undefined keep their value; `secret: null` clears it. */
  updateWebhook(
    projectId: string,
    bankId: string,
    id: string,
    patch: {
      url?: string;
      secret?: string | null;
      event_types?: string[];
      enabled?: boolean;
      http_config?: string;
    },
  ): Promise<WebhookRecord | null>;
  /** Deletes a webhook and its deliveries. */
  deleteWebhook(projectId: string, bankId: string, id: string): Promise<boolean>;
  /**
   * Records events: one pending delivery per enabled webhook of the bank subscribed to the
   * event's type. An event already recorded for a webhook (same key) adds nothing. Returns the
   * deliveries added.
   */
  enqueueWebhookEvents(projectId: string, bankId: string, events: WebhookEvent[]): Promise<number>;
  /**
   * Claims the next due delivery (pending, its time come, no live lease) for `leaseMs`: one
   * process at a time holds it, whatever number of processes share the database.
   */
  claimWebhookDelivery(workerId: string, leaseMs: number): Promise<ClaimedDelivery | null>;
  /**
   * Records an attempt's outcome and releases the lease; nothing happens when the lease was
   * lost (another worker took the delivery over). A finished delivery's body is dropped (only
   * the log of its attempts stays). A finished delivery beyond the newest `keep`
   * of its webhook is dropped.
   */
  finishWebhookAttempt(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    outcome: AttemptOutcome,
    keep: number,
  ): Promise<boolean>;
  /** A webhook's deliveries, newest first, keyset-paged. */
  listWebhookDeliveries(
    projectId: string,
    bankId: string,
    webhookId: string,
    page: { limit: number; cursor?: string },
  ): Promise<Page<WebhookDeliveryRecord>>;
}

const COLUMNS = `id::text AS id, bank_id, url, secret, event_types, enabled, http_config, created_at, updated_at`;

const DELIVERY_COLUMNS = `id::text AS id, webhook_id::text AS webhook_id, url, event_type, status, attempts,
  CASE WHEN status = 'pending' THEN next_attempt_at END AS next_attempt_at, last_error, last_response_status,
  last_response_body, last_attempt_at, delivered_at, attempt_log, created_at, updated_at, seq`;

/** A delivery that may be attempted now: pending, its time come, no live lease. */
const DUE = `status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())`;

/** Projects tried per claim before falling back to any due delivery. */
const CANDIDATES = 16;

/**
 * The projects with due deliveries, the one whose last claim is oldest first. The projects with
 * any pending delivery are found by skipping through the webhook_deliveries_fair index (one
 * probe per project, however long its backlog), not by reading every pending delivery.
 */
const CANDIDATE_PROJECTS = `
  WITH RECURSIVE w(project_id) AS (
    (SELECT project_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY project_id LIMIT 1)
    UNION ALL
    SELECT n.project_id FROM w CROSS JOIN LATERAL (
      SELECT d.project_id FROM webhook_deliveries d
      WHERE d.status = 'pending' AND d.project_id > w.project_id
      ORDER BY d.project_id LIMIT 1) n)
  SELECT w.project_id FROM w LEFT JOIN webhook_turns t ON t.project_id = w.project_id
  WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE project_id = w.project_id AND ${DUE})
  ORDER BY t.claimed_at NULLS FIRST, w.project_id
  LIMIT $1`;

/**
 * Claims the due delivery of one project (any project with `projectId` null) whose time came
 * first, and records the project's turn, in one statement.
 */
async function claimDeliveryIn(
  db: Db,
  workerId: string,
  leaseMs: number,
  projectId: string | null,
): Promise<ClaimedDelivery | null> {
  // The candidate is materialized (picked once), as in claimOperation.
  const rows = await db.query<{
    project_id: string;
    bank_id: string;
    id: string;
    webhook_id: string;
    event_type: string;
    body: string;
    attempts: number;
    url: string;
    secret: string | null;
    http_config: string;
    enabled: boolean;
  }>(
    `WITH c AS MATERIALIZED (
       SELECT project_id, bank_id, id FROM webhook_deliveries
       WHERE ${DUE} ${projectId === null ? '' : 'AND project_id = $3'}
       ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED),
     u AS (
       UPDATE webhook_deliveries d SET attempts = d.attempts + 1, locked_by = $1,
         locked_until = now() + ($2::int * interval '1 millisecond'), updated_at = now()
       FROM c WHERE d.project_id = c.project_id AND d.bank_id = c.bank_id AND d.id = c.id
       RETURNING d.project_id, d.bank_id, d.id, d.webhook_id, d.event_type, d.body, d.attempts),
     t AS (
       INSERT INTO webhook_turns (project_id, claimed_at) SELECT u.project_id, clock_timestamp() FROM u
       ON CONFLICT (project_id) DO UPDATE SET claimed_at = excluded.claimed_at)
     SELECT u.project_id, u.bank_id, u.id::text AS id, u.webhook_id::text AS webhook_id, u.event_type,
       u.body, u.attempts, w.url, w.secret, w.http_config, w.enabled
     FROM u JOIN webhooks w ON w.project_id = u.project_id AND w.bank_id = u.bank_id AND w.id = u.webhook_id`,
    projectId === null ? [workerId, leaseMs] : [workerId, leaseMs, projectId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    projectId: r.project_id,
    bankId: r.bank_id,
    id: r.id,
    webhookId: r.webhook_id,
    eventType: r.event_type,
    body: r.body,
    attempt: r.attempts,
    webhook: { url: r.url, secret: r.secret, http_config: r.http_config, enabled: r.enabled },
  };
}

/** Webhooks and their deliveries (claimed with FOR UPDATE SKIP LOCKED, like operations). */
export function webhookQueries(db: Db): WebhookStore {
  return {
    listWebhooks(projectId, bankId) {
      return db.query<WebhookRecord>(
        `SELECT ${COLUMNS} FROM webhooks WHERE project_id = $1 AND bank_id = $2 ORDER BY created_at, id`,
        [projectId, bankId],
      );
    },

    async getWebhook(projectId, bankId, id) {
      const rows = await db.query<WebhookRecord>(
        `SELECT ${COLUMNS} FROM webhooks WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
        [projectId, bankId, id],
      );
      return rows[0] ?? null;
    },

    insertWebhook(projectId, bankId, w, max) {
      return db.transaction(async (tx) => {
        // The bank row orders concurrent inserts: the count is the one this insert adds to.
        await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE', [
          projectId,
          bankId,
        ]);
        const rows = await tx.query<WebhookRecord>(
          `INSERT INTO webhooks (project_id, bank_id, id, url, secret, event_types, enabled, http_config)
           SELECT $1, $2, $3, $4, $5, $6::text[], $7, $8
           WHERE (SELECT count(*) FROM webhooks WHERE project_id = $1 AND bank_id = $2) < $9
           RETURNING ${COLUMNS}`,
          [projectId, bankId, w.id, w.url, w.secret, w.event_types, w.enabled, w.http_config, max],
        );
        return rows[0] ?? null;
      });
    },

    async updateWebhook(projectId, bankId, id, patch) {
      // A null parameter keeps the column; the secret has its own flag, as null clears it.
      const rows = await db.query<WebhookRecord>(
        `UPDATE webhooks SET url = coalesce($4, url),
           secret = CASE WHEN $5 THEN $6 ELSE secret END,
           event_types = coalesce($7::text[], event_types), enabled = coalesce($8, enabled),
           http_config = coalesce($9, http_config), updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING ${COLUMNS}`,
        [
          projectId,
          bankId,
          id,
          patch.url ?? null,
          patch.secret !== undefined,
          patch.secret ?? null,
          patch.event_types ?? null,
          patch.enabled ?? null,
          patch.http_config ?? null,
        ],
      );
      return rows[0] ?? null;
    },

    async deleteWebhook(projectId, bankId, id) {
      const rows = await db.query(
        'DELETE FROM webhooks WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING 1',
        [projectId, bankId, id],
      );
      return rows.length > 0;
    },

    async enqueueWebhookEvents(projectId, bankId, events) {
      if (events.length === 0) return 0;
      // Fenced when a job queues them: a job of a bank deleted and created again queued its
      // events to the new bank's webhooks.
      const rows = await fencedWrite(db, projectId, bankId, (q) =>
        q.query<{ n: number }>(
          `WITH e AS (
           SELECT * FROM unnest($3::text[], $4::text[], $5::text[]) AS e(event_type, event_key, body)),
         ins AS (
           INSERT INTO webhook_deliveries (project_id, bank_id, id, webhook_id, event_type, event_key, url, body)
           SELECT w.project_id, w.bank_id, gen_random_uuid(), w.id, e.event_type, e.event_key, w.url, e.body
           FROM webhooks w JOIN e ON e.event_type = ANY(w.event_types)
           WHERE w.project_id = $1 AND w.bank_id = $2 AND w.enabled
           ON CONFLICT (project_id, bank_id, webhook_id, event_key) DO NOTHING RETURNING 1)
         SELECT count(*)::int AS n FROM ins`,
          [
            projectId,
            bankId,
            events.map((e) => e.eventType),
            events.map((e) => e.eventKey),
            events.map((e) => e.body),
          ],
        ),
      );
      return rows[0]?.n ?? 0;
    },

    async claimWebhookDelivery(workerId, leaseMs) {
      // Fair across tenants: the projects with due deliveries, the one whose last claim is
      // oldest (never first) tried first. Should every candidate be taken, any due one is claimed.
      const projects = await db.query<{ project_id: string }>(CANDIDATE_PROJECTS, [CANDIDATES]);
      for (const p of projects) {
        const claimed = await claimDeliveryIn(db, workerId, leaseMs, p.project_id);
        if (claimed) return claimed;
      }
      return projects.length === CANDIDATES ? claimDeliveryIn(db, workerId, leaseMs, null) : null;
    },

    async finishWebhookAttempt(projectId, bankId, id, workerId, o, keep) {
      const a = o.attempt;
      const rows = await db.query<{ webhook_id: string }>(
        `UPDATE webhook_deliveries SET status = $5,
           next_attempt_at = now() + ($6::int * interval '1 millisecond'),
           locked_by = NULL, locked_until = NULL, url = $7, last_error = $8, last_response_status = $9,
           last_response_body = $10, last_attempt_at = now(),
           delivered_at = CASE WHEN $5 = 'delivered' THEN now() END,
           attempt_log = attempt_log || $11::jsonb, updated_at = now(),
           body = CASE WHEN $5 = 'pending' THEN body ELSE '' END
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4
         RETURNING webhook_id::text AS webhook_id`,
        [
          projectId,
          bankId,
          id,
          workerId,
          o.status,
          Math.max(0, Math.round(o.retryInMs ?? 0)),
          o.url,
          a.error,
          a.response_status,
          o.responseBody,
          JSON.stringify([a]),
        ],
      );
      const webhookId = rows[0]?.webhook_id;
      if (webhookId === undefined) return false;
      if (o.status !== 'pending') {
        // The log keeps the newest `keep` finished deliveries of the webhook; one statement
        // bounded by `keep` rows of the listing index.
        await db.query(
          `DELETE FROM webhook_deliveries WHERE project_id = $1 AND bank_id = $2 AND webhook_id = $3
             AND status <> 'pending' AND seq <= (
               SELECT seq FROM webhook_deliveries WHERE project_id = $1 AND bank_id = $2 AND webhook_id = $3
               ORDER BY seq DESC OFFSET $4 LIMIT 1)`,
          [projectId, bankId, webhookId, keep],
        );
      }
      return true;
    },

    async listWebhookDeliveries(projectId, bankId, webhookId, page) {
      const before = decodeCursor(page.cursor);
      const params: unknown[] = [projectId, bankId, webhookId, page.limit + 1];
      let extra = '';
      if (before !== null) {
        params.push(before);
        extra = ` AND seq < $${params.length}`;
      }
      const rows = await db.query<WebhookDeliveryRecord & { seq: string | number }>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
         WHERE project_id = $1 AND bank_id = $2 AND webhook_id = $3${extra}
         ORDER BY seq DESC LIMIT $4`,
        params,
      );
      const more = rows.length > page.limit;
      const items = rows.slice(0, page.limit);
      const last = items.at(-1);
      return {
        items: items.map(({ seq: _s, ...d }) => d),
        next_cursor: more && last ? encodeCursor(Number(last.seq)) : null,
      };
    },
  };
}
