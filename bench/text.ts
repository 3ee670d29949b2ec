/**
 * Text analysis throughput: items per second of each function retain and recall call per
 * memory or query, over short chat lines. `npx tsx bench/text.ts` prints the table.
 */
import { pathToFileURL } from 'node:url';
import { extractEntities } from '../src/text/entities.js';
import { classifyFactType } from '../src/text/fact-type.js';
import { findDates } from '../src/text/temporal.js';
import { keywordTerms } from '../src/text/terms.js';
import { countTokens } from '../src/text/tokens.js';

/** Chat turns of the kind retain sees: speaker label, 8 to 40 words, names, some dates. */
const LINES = [
  'Caroline: I went to the LGBTQ support group in Boston yesterday with Melanie.',
  "Melanie: That's amazing! I painted a sunrise over the lake last weekend, it was so calming.",
  "Jon: Lost my job as a banker last week, so I'm starting my own dance studio in Seattle.",
  'Gina: Sorry to hear that, Jon! I also lost my job at Door Dash this month.',
  'Caroline: My kids and I are planning a camping trip to Yosemite next month, we go every summer.',
  "Melanie: I've been practising pottery since 2016; my favourite piece is a blue bowl.",
  'John: We visited my grandmother in Portland on 8 May, 2023 and had dinner with Dr. Smith.',
  'Maria: I usually volunteer at the homeless shelter on Fridays, it keeps me grounded.',
  'Nate: Won my third gaming tournament two weeks ago! The prize was $500 and a trophy.',
  'Joanna: Finished my first screenplay and sent it to a producer at Warner Bros. Fingers crossed!',
  'Caroline: Thanks, Mel! Your support means a lot. How are the kids doing?',
  'Melanie: They loved the museum trip in July. We saw dinosaur bones and a planetarium show.',
  'Jon: To get more students, first post short clips online, then offer a free trial class.',
  'Gina: Actually, the store opens on Saturday, not Friday, because the sign is not ready.',
  "Maria: I'm a nurse at Saint Mary's Hospital and I live in Chicago with my dog Coco.",
  'John: Started boot camp with my family in April; we run 5K every morning before work.',
];

// compromise takes seconds of calls to reach its steady speed (JIT of its tagger), and a
// server runs warm, so each function is warmed up before it is timed.
const WARMUP_SECONDS = 1.5;
const SECONDS = 1;

/** Calls of `fn` on the lines, round-robin, for `seconds`; returns calls per second. */
function run(fn: (line: string) => unknown, seconds: number): number {
  let calls = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < seconds * 1000) {
    for (const line of LINES) fn(line);
    calls += LINES.length;
    elapsed = performance.now() - started;
  }
  return calls / (elapsed / 1000);
}

function throughput(fn: (line: string) => unknown): number {
  run(fn, WARMUP_SECONDS);
  return run(fn, SECONDS);
}

/** Rows of `{ benchmark, metric, value, unit }`. */
export async function benchText(): Promise<Record<string, string | number>[]> {
  const mentioned = new Date('2023-05-09T13:56:00Z');
  const functions: [string, (line: string) => unknown][] = [
    ['keywordTerms', keywordTerms],
    ['extractEntities', extractEntities],
    ['findDates', (line) => findDates(line, mentioned)],
    ['classifyFactType', classifyFactType],
    ['countTokens', countTokens],
  ];
  return functions.map(([name, fn]) => ({
    benchmark: 'text',
    metric: `${name} (chat lines of 8-40 words)`,
    value: Math.round(throughput(fn)),
    unit: 'items/s',
  }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchText());
}
