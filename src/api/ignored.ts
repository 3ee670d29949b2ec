/**
 * Names the request fields that validation dropped (the tolerant reader): every path present in
 * the raw JSON but absent from the parsed value. Reported in `X-Ignored-Fields`.
 */
export function ignoredFields(raw: unknown, parsed: unknown, prefix = ''): string[] {
  const out: string[] = [];
  // Paths are spelt out only for the fields found: a 1 MB Retain has ~100k values to compare.
  const at: (string | number)[] = [];
  const walk = (r: unknown, p: unknown): void => {
    // Kept as it came (free-form metadata): nothing below it was dropped.
    if (r === p) return;
    if (Array.isArray(r) && Array.isArray(p)) {
      for (let i = 0; i < r.length; i++) {
        at.push(i);
        walk(r[i], p[i]);
        at.pop();
      }
      return;
    }
    if (!isPlainObject(r) || !isPlainObject(p)) return;
    for (const k of Object.keys(r)) {
      at.push(k);
      if (Object.hasOwn(p, k)) walk(r[k], p[k]);
      else out.push(prefix + at.join('.'));
      at.pop();
    }
  };
  walk(raw, parsed);
  return out;
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
