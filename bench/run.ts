/**
 * `npm run bench` runs every benchmark and prints a table each; `npm run bench -- locomo
 * recall-latency` runs only the named ones. Flags after the names go to the benchmarks that
 * take them (`--per-turn`, `--engine`, `--config` for locomo; `--engine`, `--samples` for
 * evaluations; `--sizes`, `--engines`, `--fresh`, `--database`, `--load-only` for recall-latency; `--engines`, `--mixes`, `--concurrency`,
 * `--seconds`, `--memories`, `--no-worker`, `--no-vacuum`, `--cpu-prof` for load; `--items`, `--entities`,
 * `--seconds`, `--disk` for isolation; `--rows`, `--offset` for offsets; `--memories`, `--runs`, `--only` for aggregates; `--quick`, `--engine=pglite` for linear).
 */
import { aggregateArgs, benchAggregates } from './aggregates.js';
import { benchEmbed } from './embed.js';
import { benchEvaluations, evaluationArgs } from './evaluations.js';
import { benchIsolation, isolationArgs } from './isolation.js';
import { benchLinear } from './linear.js';
import { benchLoad, loadArgs } from './load.js';
import { benchLocomo, locomoArgs } from './locomo.js';
import { benchLongMemEval, longMemEvalArgs } from './longmemeval.js';
import { benchRecallLatency, latencyArgs } from './recall-latency.js';
import { benchRetain } from './retain.js';
import { benchSealedVectors, sealedVectorArgs } from './sealed-vectors.js';
import { benchText } from './text.js';
import { benchOffsets, offsetArgs } from './offsets.js';

type Rows = Record<string, string | number>[];

const BENCHMARKS: Record<string, (argv: string[]) => Promise<Rows>> = {
  embed: () => benchEmbed(),
  text: () => benchText(),
  retain: () => benchRetain(),
  linear: (argv) => benchLinear(argv),
  locomo: (argv) => benchLocomo(locomoArgs(argv)),
  evaluations: (argv) => benchEvaluations(evaluationArgs(argv)),
  longmemeval: (argv) => benchLongMemEval(longMemEvalArgs(argv)),
  load: (argv) =>
    benchLoad({ ...loadArgs(argv), log: (m) => process.stderr.write(`  ${m}\n`) }).then((rows) =>
      rows.map((r) => ({ ...r })),
    ),
  offsets: (argv) => benchOffsets(offsetArgs(argv)),
  aggregates: (argv) => benchAggregates(aggregateArgs(argv)),
  isolation: (argv) => benchIsolation(isolationArgs(argv)).then((rows) => rows.map((r) => ({ ...r }))),
  'sealed-vectors': (argv) =>
    benchSealedVectors({ ...sealedVectorArgs(argv), log: (m) => process.stderr.write(`  ${m}\n`) }),
  'recall-latency': (argv) =>
    benchRecallLatency({ ...latencyArgs(argv), log: (m) => process.stderr.write(`  ${m}\n`) }),
};

const args = process.argv.slice(2);
const names = args.filter((a) => !a.startsWith('-') && a in BENCHMARKS);
const unknown = args.filter(
  (a, i) => !a.startsWith('-') && !(a in BENCHMARKS) && !args[i - 1]?.startsWith('--'),
);
if (unknown.length) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (known: ${Object.keys(BENCHMARKS).join(', ')})`);
  process.exit(2);
}
const flags = args.filter((a) => !names.includes(a));
for (const name of names.length ? names : Object.keys(BENCHMARKS)) {
  const started = performance.now();
  console.log(`\n## ${name}`);
  console.table(await BENCHMARKS[name]!(flags));
  console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
}
