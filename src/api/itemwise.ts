/**
 * Validation of a request body with a long list, item by item with turns of the event loop
 * between runs of items. zod validates a body in one synchronous step: a 10 MB Retain of 1,000
 * items held the loop for ~60 ms per 5 MB. The answer is the one zod gives for the whole body:
 * the same value, and the same issues in the same order with the same paths (`items.3.content`),
 * except for a list longer than its maximum, which is refused by its length alone before any
 * item is walked.
 */
import { z } from 'zod';
import { breathe } from '../store/breathe.js';

/** Items validated between two turns. */
export const ITEMS_PER_TURN = 16;

type Parsed = Awaited<ReturnType<z.ZodType['safeParseAsync']>>;

/**
 * Makes `schema`'s asynchronous validation (the one the route validator runs) go item by item
 * through the array under `key`. The schema itself (its type, its OpenAPI form, its synchronous
 * `parse`) is unchanged: it is the same object, so it stays the one the document names.
 */
export function itemwise<S extends z.ZodObject>(
  schema: S,
  key: keyof S['shape'] & string,
  opts: { turn?: () => Promise<void>; every?: number } = {},
): S {
  const list = schema.shape[key];
  if (!(list instanceof z.ZodArray)) throw new Error(`itemwise: ${key} is not an array`);
  const element = list.element as z.ZodType;
  const checks = (list._zod.def.checks ?? []) as z.core.$ZodCheck<unknown[]>[];
  const max = checks
    .map((c) => c._zod.def as { check: string; maximum?: number })
    .find((d) => d.check === 'max_length')?.maximum;
  /** The list's length checks alone (min, max), on any elements. */
  const length = z.array(z.unknown()).check(...checks);
  const rest = schema.omit({ [key]: true } as never) as z.ZodObject;
  const whole = schema.safeParseAsync.bind(schema);
  const turn = opts.turn ?? breathe;
  const every = opts.every ?? ITEMS_PER_TURN;
  const byItem = async (data: unknown): Promise<Parsed> => {
    const items = (data as Record<string, unknown>)[key] as unknown[];
    const issues: z.core.$ZodIssue[] = [];
    const out: unknown[] = [];
    if (max !== undefined && items.length > max) {
      // Refused by its length (the list's own checks, so the same message) before any item is walked.
      const r = length.safeParse(items);
      if (!r.success)
        for (const issue of r.error.issues) issues.push({ ...issue, path: [key, ...issue.path] });
    } else {
      for (let i = 0; i < items.length; i++) {
        if (i > 0 && i % every === 0) await turn();
        const r = await element.safeParseAsync(items[i]);
        if (r.success) out.push(r.data);
        else for (const issue of r.error.issues) issues.push({ ...issue, path: [key, i, ...issue.path] });
      }
    }
    const others = await rest.safeParseAsync(data);
    if (!others.success) issues.push(...others.error.issues);
    if (issues.length) return { success: false, error: new z.ZodError(issues) } as Parsed;
    return { success: true, data: { [key]: out, ...(others.data as object) } } as Parsed;
  };
  Object.defineProperty(schema, 'safeParseAsync', {
    value: (data: unknown, params?: z.core.ParseContext<z.core.$ZodIssue>) => {
      const items = data && typeof data === 'object' ? (data as Record<string, unknown>)[key] : undefined;
      // Short lists, and bodies that are not even the right shape, go to zod as they are.
      return Array.isArray(items) && items.length > every ? byItem(data) : whole(data, params);
    },
    configurable: true,
    writable: true,
  });
  return schema;
}
