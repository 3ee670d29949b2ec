import { createTwoFilesPatch } from 'diff';

/**
 * A unified diff (three lines of context) from `before` to `after`, by line; empty when they
 * are equal. The headers name the two sides.
 */
export function unifiedDiff(before: string, after: string, names: [string, string]): string {
  if (before === after) return '';
  const withEnd = (t: string) => (t === '' || t.endsWith('\n') ? t : `${t}\n`);
  return createTwoFilesPatch(names[0], names[1], withEnd(before), withEnd(after), '', '', { context: 3 });
}
