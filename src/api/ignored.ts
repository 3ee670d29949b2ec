/**
 * Names the request fields that validation dropped (the tolerant reader): every path present in
 * the raw JSON but absent from the parsed value. Reported in `X-Ignored-Fields`.
 */
export function ignoredFields(raw: unknown, parsed: unknown, prefix = ''): string[] {
  // Kept as it came (free-form metadata): nothing below it was dropped.
  if (raw === parsed) return [];
  if (Array.isArray(raw) && Array.isArray(parsed)) {
    return raw.flatMap((r, i) => ignoredFields(r, parsed[i], `${prefix}${i}.`));
  }
  if (!isPlainObject(raw) || !isPlainObject(parsed)) return [];
  return Object.keys(raw).flatMap((k) =>
    k in parsed ? ignoredFields(raw[k], parsed[k], `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
