import type { Context, MiddlewareHandler } from 'hono';
import type { Config } from '../config/load.js';
import { DAY_MS, fixedWindow, MINUTE_MS, NO_LIMITS, rateLimitHeaders, rateLimited } from '../core/quotas.js';
import type { LimitDefaults } from '../store/store.js';
import type { AppEnv } from './env.js';

/** Server-wide default limits from `MNEMO_DEFAULT_*`. */
export function limitDefaults(config: Config): LimitDefaults {
  return {
    requestsPerMinute: config.defaultRequestsPerMinute ?? null,
    requestsPerMinutePerKey: config.defaultRequestsPerMinutePerKey ?? null,
    retainedItemsPerDay: config.defaultRetainedItemsPerDay ?? null,
    storedMemories: config.defaultStoredMemories ?? null,
    budgets: {
      retained_items_per_minute: config.defaultRetainedItemsPerMinute,
      characters_per_minute: config.defaultCharactersPerMinute,
      characters_per_day: config.defaultCharactersPerDay,
      entities_per_minute: config.defaultEntitiesPerMinute,
      entities_per_day: config.defaultEntitiesPerDay,
      model_calls_per_minute: config.defaultModelCallsPerMinute,
      model_calls_per_day: config.defaultModelCallsPerDay,
      model_tokens_per_minute: config.defaultModelTokensPerMinute,
      model_tokens_per_day: config.defaultModelTokensPerDay,
      recall_units_per_minute: config.defaultRecallUnitsPerMinute,
      recall_units_per_day: config.defaultRecallUnitsPerDay,
    },
  };
}

/** How often one process deletes counters of long-gone windows. */
const PRUNE_EVERY_MS = 10 * MINUTE_MS;
/** Counters are kept for two days: the items-per-day window is one day long. */
const KEEP_MS = 2 * DAY_MS;

/**
 * Requests per minute per project and per API key, counted in the database so every mnemo
 * process on it shares the count: one upsert per request (none of the counters is touched for
 * a project without limits). Requests by the operator (admin token, or loopback without one)
 * are not counted: the operator must always be able to change the limits. Over a limit the
 * request is a 429 before its handler runs; answers carry `RateLimit-*` headers of the
 * tightest counter.
 */
export function rateLimits(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const tightest = await countRequests(c, 1);
    if (!tightest) return next();
    await next();
    // A quota 429 from the handler already carries the headers of the limit it hit.
    const headers = c.res.headers;
    if (headers.has('RateLimit-Limit')) return;
    // Set on the answer itself, not through `c.header` (which rebuilds it: app.ts, X-Request-Id).
    for (const [k, v] of Object.entries(rateLimitHeaders(tightest.limit, tightest.count, tightest.reset))) {
      headers.set(k, v);
    }
  };
}

/** When this process last deleted old counters. */
let lastPrune = 0;

/**
 * Counts `requests` more requests of the caller's key (nothing for the operator) and refuses
 * with 429 when that takes a counter past its limit. Returns the tightest counter (for the
 * `RateLimit-*` headers), or null when no request limit applies.
 */
export async function countRequests(
  c: Context<AppEnv>,
  requests: number,
): Promise<{ limit: number; count: number; reset: number } | null> {
  const auth = c.get('auth');
  if (auth?.actor.type !== 'key' || requests <= 0) return null;
  const s = c.get('services');
  const now = s.now();
  const window = fixedWindow(now, MINUTE_MS);
  const counts = await s.store.countRequest({
    projectId: auth.projectId,
    keyId: auth.actor.keyId ?? null,
    windowStart: window.start,
    defaults: s.limitDefaults ?? NO_LIMITS,
    requests,
  });
  if (now.getTime() - lastPrune > PRUNE_EVERY_MS) {
    lastPrune = now.getTime();
    s.store
      .pruneRateCounters(new Date(now.getTime() - KEEP_MS))
      .catch((err: unknown) => c.get('log').warn({ err }, 'pruning rate counters failed'));
  }
  if (counts.length === 0) return null;
  const tightest = counts.reduce((a, b) => (b.limit - b.count < a.limit - a.count ? b : a));
  const over = counts.find((x) => x.count > x.limit);
  if (over) {
    const name = over.scope === 'key' ? 'requests_per_minute_per_key' : 'requests_per_minute';
    throw rateLimited(
      name,
      `${over.scope === 'key' ? 'this key' : 'this project'} is limited to ${over.limit} requests per minute; retry in ${window.resetSeconds} s`,
      over.limit,
      over.count,
      window.resetSeconds,
    );
  }
  return { limit: tightest.limit, count: tightest.count, reset: window.resetSeconds };
}
