import { type Command, InvalidArgumentError } from 'commander';
import type {
  Budget,
  Evaluation,
  EvaluationCase,
  EvaluationSummary,
} from '../../../packages/client/src/index.js';
import { EVALUATION_CHANNELS, MAX_EVALUATION_CASES } from '../../contract/evaluations.js';
import { action, type ConnectionOptions, connect, withConnection } from './connect.js';
import { jsonLines } from './files.js';
import { emit, shortDate, table } from './format.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};

const BUDGETS = ['low', 'mid', 'high'];
const budget = (v: string) => {
  if (!BUDGETS.includes(v)) throw new InvalidArgumentError(`must be one of ${BUDGETS.join(', ')}`);
  return v as Budget;
};

/**
 * The cases of a JSONL file: one `{query, expected_memory_ids, query_timestamp?, tags?}` per
 * line. A line that is no case is named with its number here; the server checks the rest.
 */
export async function readCases(path: string): Promise<EvaluationCase[]> {
  const cases: EvaluationCase[] = [];
  for await (const { lineNo, value } of jsonLines(path)) {
    const ids = value.expected_memory_ids;
    if (typeof value.query !== 'string' || !value.query)
      throw new Error(`line ${lineNo} of ${path}: "query" must be a non-empty string`);
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string'))
      throw new Error(
        `line ${lineNo} of ${path}: "expected_memory_ids" must be a non-empty array of memory ids`,
      );
    if (cases.length === MAX_EVALUATION_CASES)
      throw new Error(`${path} holds more than ${MAX_EVALUATION_CASES} cases, the most one evaluation runs`);
    cases.push(value as EvaluationCase);
  }
  if (cases.length === 0) throw new Error(`${path} holds no cases`);
  return cases;
}

const figure = (x: number) => x.toFixed(3);

/** A run for people: its figures, each channel's, and each case's rank. */
export function formatRun(e: Evaluation): string {
  const head = `evaluation ${e.id} of ${e.bank_id}: ${e.case_count} cases, k ${e.k}, budget ${e.budget}, max_tokens ${e.max_tokens}`;
  const figures = table(
    [
      { name: 'recall', recall_at_k: e.recall_at_k, mrr: e.mrr },
      ...EVALUATION_CHANNELS.map((c) => ({ name: c, ...e.channels[c] })),
    ],
    [
      { header: '', value: (r) => r.name },
      { header: `recall@${e.k}`, value: (r) => figure(r.recall_at_k) },
      { header: 'mrr', value: (r) => figure(r.mrr) },
    ],
  );
  const cases = table(
    e.cases.map((c, i) => ({ ...c, n: i + 1 })),
    [
      { header: '#', value: (c) => c.n },
      { header: 'rank', value: (c) => c.rank ?? '-' },
      { header: `recall@${e.k}`, value: (c) => figure(c.recall_at_k) },
      { header: 'found by', value: (c) => c.found_by },
      { header: 'query', value: (c) => c.query, flex: true },
    ],
  );
  return `${head}\n\n${figures}\n\n${cases}`;
}

const runColumns = (rows: EvaluationSummary[]) =>
  table(rows, [
    { header: 'id', value: (e) => e.id },
    { header: 'created', value: (e) => shortDate(e.created_at) },
    { header: 'k', value: (e) => e.k },
    { header: 'cases', value: (e) => e.case_count },
    { header: 'recall@k', value: (e) => figure(e.recall_at_k) },
    { header: 'mrr', value: (e) => figure(e.mrr) },
    { header: 'budget', value: (e) => e.budget },
  ]);

interface RunOpts extends ConnectionOptions {
  bank: string;
  cases?: string;
  from?: string;
  k?: number;
  budget?: Budget;
  maxTokens?: number;
}

/** `mnemo eval run|list|show`: recall evaluations of a bank. */
export function registerEvalCommands(program: Command): void {
  const evals = program
    .command('eval')
    .description('recall evaluations: known queries and the memories they should find, scored');
  withConnection(
    evals
      .command('run')
      .description('run the cases of a JSONL file (or a past run again) through Recall and keep the run')
      .requiredOption('--bank <bank>', 'bank id')
      .option('--cases <file.jsonl>', 'one {query, expected_memory_ids, query_timestamp?, tags?} per line')
      .option('--from <run id>', "a past run's cases again")
      .option('--k <n>', 'results of each Recall that count (1-100, default 10)', positive)
      .option('--budget <level>', 'Recall budget: low | mid | high (default the bank’s)', budget)
      .option('--max-tokens <n>', "Recall's max_tokens (default 2048)", positive),
  ).action(
    action(async (opts: RunOpts) => {
      if ((opts.cases === undefined) === (opts.from === undefined))
        throw new Error('give --cases <file.jsonl> or --from <run id>');
      const common = { k: opts.k, budget: opts.budget, max_tokens: opts.maxTokens };
      const body = opts.cases
        ? { ...common, cases: await readCases(opts.cases) }
        : { ...common, from: opts.from! };
      const run = await connect(opts).evaluations.run(opts.bank, body);
      emit(opts.json, run, () => formatRun(run));
    }),
  );
  withConnection(
    evals
      .command('list')
      .description("a bank's evaluation runs, newest first")
      .requiredOption('--bank <bank>', 'bank id')
      .option('--limit <n>', 'how many (default 50)', positive),
  ).action(
    action(async (opts: ConnectionOptions & { bank: string; limit?: number }) => {
      const page = await connect(opts).evaluations.list(opts.bank, { limit: opts.limit });
      emit(opts.json, page, () => runColumns(page.items));
    }),
  );
  withConnection(
    evals
      .command('show')
      .description('one evaluation run with its cases')
      .argument('<id>', 'run id')
      .requiredOption('--bank <bank>', 'bank id'),
  ).action(
    action(async (id: string, opts: ConnectionOptions & { bank: string }) => {
      const run = await connect(opts).evaluations.get(opts.bank, id);
      emit(opts.json, run, () => formatRun(run));
    }),
  );
}
