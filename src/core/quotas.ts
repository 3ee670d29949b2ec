import type { LimitDefaults } from '../store/store.js';
import { AppError } from './errors.js';
import type { Services } from './services.js';
import type { Project, ProjectLimits } from './types.js';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** The fixed window (aligned to the epoch, so UTC days) that `now` falls in. */
export function fixedWindow(now: Date, lengthMs: number): { start: Date; resetSeconds: number } {
  const start = Math.floor(now.getTime() / lengthMs) * lengthMs;
  return {
    start: new Date(start),
    resetSeconds: Math.max(1, Math.ceil((start + lengthMs - now.getTime()) / 1000)),
  };
}

export const NO_LIMITS: LimitDefaults = {
  requestsPerMinute: null,
  requestsPerMinutePerKey: null,
  retainedItemsPerDay: null,
  storedMemories: null,
};

/** The `RateLimit-*` headers (IETF draft: limit, remaining, seconds until the window resets). */
export function rateLimitHeaders(limit: number, used: number, resetSeconds: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - used)),
    'RateLimit-Reset': String(resetSeconds),
  };
}

/** The 429 of an exceeded limit, with `Retry-After` and the `RateLimit-*` headers. */
export function rateLimited(
  name: string,
  message: string,
  limit: number,
  used: number,
  retryAfterSeconds: number,
): AppError {
  return new AppError('rate_limited', message, {
    extra: { limit: name },
    headers: {
      'Retry-After': String(retryAfterSeconds),
      ...rateLimitHeaders(limit, used, retryAfterSeconds),
    },
  });
}

/**
 * Charges a Retain of `items` items against the project's quotas before anything is written:
 * retained items per day and stored memories. Over either, it is a 429 and nothing is counted.
 * Returns a refund for a Retain that then fails.
 */
export async function chargeRetain(
  s: Services,
  projectId: string,
  items: number,
): Promise<() => Promise<void>> {
  const now = s.now();
  const day = fixedWindow(now, DAY_MS);
  const defaults = s.limitDefaults ?? NO_LIMITS;
  const r = await s.store.chargeItems({ projectId, items, windowStart: day.start, defaults });
  if (!r.accepted) {
    if (r.exceeded === 'stored_memories') {
      // Stored memories only go down when memories are deleted: no window will reset it.
      throw rateLimited(
        r.exceeded,
        `project quota of ${r.limit} stored memories reached (${r.used} stored, ${items} more asked); delete memories or ask the operator for a higher quota`,
        r.limit,
        r.used,
        day.resetSeconds,
      );
    }
    throw rateLimited(
      r.exceeded,
      `project quota of ${r.limit} retained items per day reached (${r.used} today, ${items} more asked)`,
      r.limit,
      r.used,
      day.resetSeconds,
    );
  }
  return async () => {
    await s.store.refundItems(projectId, items, day.start);
  };
}

/** A project's limits with the server defaults applied (null = unlimited). */
export function effectiveLimits(s: Services, limits: ProjectLimits): Required<ProjectLimits> {
  const d = s.limitDefaults ?? NO_LIMITS;
  const pick = (k: keyof ProjectLimits, fallback: number | null) =>
    k in limits ? (limits[k] ?? null) : fallback;
  return {
    requests_per_minute: pick('requests_per_minute', d.requestsPerMinute),
    requests_per_minute_per_key: pick('requests_per_minute_per_key', d.requestsPerMinutePerKey),
    retained_items_per_day: pick('retained_items_per_day', d.retainedItemsPerDay),
    stored_memories: pick('stored_memories', d.storedMemories),
  };
}

/** A project with its effective limits and current usage (this minute, today, stored). */
export async function projectWithUsage(s: Services, project: Project) {
  const now = s.now();
  const usage = await s.store.projectUsage(project.id, {
    minuteStart: fixedWindow(now, MINUTE_MS).start,
    dayStart: fixedWindow(now, DAY_MS).start,
  });
  return { ...project, effective_limits: effectiveLimits(s, project.limits), usage };
}
