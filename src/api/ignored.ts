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
    Object.hasOwn(parsed, k) ? ignoredFields(raw[k], parsed[k], `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Printable ASCII but `%` and `,`: what a name keeps as is in the header. */
const UNSAFE = /[^!-$&-+\--~]/gu;

/**
 * The `X-Ignored-Fields` value: names joined by `, `, each percent-encoded (UTF-8) outside
 * printable ASCII and for `%` and `,`: a header carries no control characters or non-Latin
 * text, and a field may be named anything. Whole names only, up to about 2,000 characters.
 */
export function ignoredFieldsHeader(names: string[]): string {
  const encoded: string[] = [];
  let length = 0;
  for (const name of names) {
    const e = name.replace(UNSAFE, (ch) =>
      [...Buffer.from(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
    );
    length += e.length + 2;
    if (length > 2000) break;
    encoded.push(e);
  }
  return encoded.join(', ');
}
