import pino, { type Logger } from 'pino';

/**
 * Field names whose values are secrets wherever they appear (case-insensitive): credentials,
 * keys, tokens, secrets, passwords, cookies. `keyId`, `tokens` (a count) and the like are kept.
 */
const SECRET_FIELD =
  /^(?:(?:proxy-)?authorization|(?:set-)?cookie|[\w-]*(?:key|token|secret|password)|passwd)$/i;
const CENSOR = '[redacted]';
/** Deeper than this a logged value is cut: a log line is no place for a deep structure. */
const MAX_DEPTH = 32;

/** Whether a field of this name is redacted in logs. */
export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name) && !/^(?:[\w-]*[-_])?(?:key[-_]?id|keyid)$/i.test(name);
}

/**
 * A copy of `value` with every secret-named field at any depth replaced by `[redacted]`.
 * Errors become pino's serialized form first so that their own fields (a request's headers on a
 * client error, say) are walked too. Cycles and excessive depth are cut, never followed.
 */
export function redactDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  try {
    if (value instanceof Error) return redactDeep({ ...pino.stdSerializers.err(value) }, depth, seen);
    if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1, seen));
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      // Headers and Maps carry header names as keys; other instances (Date, Buffer) are kept.
      if (value instanceof Map || (typeof Headers !== 'undefined' && value instanceof Headers))
        return redactDeep(Object.fromEntries(value as Map<string, unknown>), depth, seen);
      return value;
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = isSecretField(k) ? CENSOR : redactDeep(v, depth + 1, seen);
    return out;
  } finally {
    seen.delete(value);
  }
}

/** JSON logs; any field named like a secret is redacted, at any depth, in records and child bindings. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: undefined,
      // The log formatter has already turned errors into redacted plain objects: keep them as they are.
      serializers: { err: (e: unknown) => (e instanceof Error ? pino.stdSerializers.err(e) : e) },
      formatters: { log: (obj) => redactDeep(obj) as Record<string, unknown> },
    },
    destination,
  );
  // pino applies no formatter to a child's bindings; children inherit this method from the root.
  const child = logger.child as unknown as (...args: unknown[]) => unknown;
  const redactingChild = function (this: unknown, bindings: unknown, ...rest: unknown[]) {
    return child.call(this, redactDeep(bindings), ...rest);
  };
  logger.child = redactingChild as unknown as typeof logger.child;
  return logger;
}
