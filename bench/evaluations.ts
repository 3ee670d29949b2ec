import { pathToFileURL } from 'node:url';
import { benchServer } from './api-server.js';
import { loadSamples, questionsOf, sessionItems, sessionsOf } from './locomo.js';

const K = 10;
const MAX_TOKENS = 20_000;

export interface EvaluationBenchOptions {
  engine?: 'pglite' | 'postgres';
  samples?: string[];
  file?: string;
}

type Row = Record<string, string | number>;

/** Recall@k and MRR@k of ranked id lists against expected id sets: written apart from core. */
function figures(ranked: string[][], expected: string[][], k: number) {
  let recall = 0;
  let rr = 0;
  ranked.forEach((ids, i) => {
    const top = ids.slice(0, k);
    const want = expected[i]!;
    recall += want.filter((id) => top.includes(id)).length / want.length;
    const first = top.findIndex((id) => want.includes(id));
    rr += first >= 0 ? 1 / (first + 1) : 0;
  });
  return { recall: recall / ranked.length, mrr: rr / ranked.length };
}

export async function benchEvaluations(opts: EvaluationBenchOptions = {}): Promise<Row[]> {
  const samples = loadSamples(opts);
  const { server, call, close } = await benchServer('evaluations', opts.engine);
  const rows: Row[] = [];
  const r3 = (x: number) => Number(x.toFixed(3));
  try {
    let totalCases = 0;
    let evalMs = 0;
    let recallMs = 0;
    let equal = true;
    let recallSum = 0;
    let mrrSum = 0;
    for (const sample of samples) {
      const bank = encodeURIComponent(`locomo-${sample.sample_id}`);
      // The memory of each turn, found again by the dia id kept in its metadata.
      const idOf = new Map<string, string>();
      for (const session of sessionsOf(sample)) {
        // As bench/locomo.ts retains them.
        await call('POST', `/banks/${bank}/memories`, { items: sessionItems(sample, session) });
      }
      for (let cursor: string | null = null; ; ) {
        const page: any = await call(
          'GET',
          `/banks/${bank}/memories?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
        );
        for (const m of page.items)
          if (typeof m.metadata?.dia_id === 'string') idOf.set(m.metadata.dia_id, m.id);
        cursor = page.next_cursor;
        if (!cursor) break;
      }
      const cases = questionsOf(sample).map((q) => ({
        query: q.question,
        expected_memory_ids: q.evidence.map((d) => idOf.get(d)!),
      }));

      let t0 = performance.now();
      const run = await call('POST', `/banks/${bank}/evaluations`, { k: K, max_tokens: MAX_TOKENS, cases });
      const evalTook = performance.now() - t0;

      t0 = performance.now();
      const ranked: string[][] = [];
      for (const c of cases) {
        const r = await call('POST', `/banks/${bank}/memories/recall`, {
          query: c.query,
          max_tokens: MAX_TOKENS,
        });
        ranked.push(r.results.map((x: { id: string }) => x.id));
      }
      const recallTook = performance.now() - t0;
      const own = figures(
        ranked,
        cases.map((c) => c.expected_memory_ids),
        K,
      );
      const same = Math.abs(own.recall - run.recall_at_k) < 1e-6 && Math.abs(own.mrr - run.mrr) < 1e-6;
      equal &&= same;
      totalCases += cases.length;
      recallSum += run.recall_at_k * cases.length;
      mrrSum += run.mrr * cases.length;
      evalMs += evalTook;
      recallMs += recallTook;
      rows.push({
        bank: sample.sample_id,
        cases: cases.length,
        'eval R@10': r3(run.recall_at_k),
        '/recall R@10': r3(own.recall),
        'eval MRR@10': r3(run.mrr),
        '/recall MRR@10': r3(own.mrr),
        equal: same ? 'yes' : 'NO',
        'semantic R@10': r3(run.channels.semantic.recall_at_k),
        'keyword R@10': r3(run.channels.keyword.recall_at_k),
        'graph R@10': r3(run.channels.graph.recall_at_k),
        'temporal R@10': r3(run.channels.temporal.recall_at_k),
        'eval ms/case': r3(evalTook / cases.length),
        'recall ms': r3(recallTook / cases.length),
      });
    }
    rows.push({
      bank: `all (${server.services.store.engine})`,
      cases: totalCases,
      'eval R@10': r3(recallSum / totalCases),
      'eval MRR@10': r3(mrrSum / totalCases),
      equal: equal ? 'yes' : 'NO',
      'eval ms/case': r3(evalMs / totalCases),
      'recall ms': r3(recallMs / totalCases),
    });
    return rows;
  } finally {
    await close();
  }
}

export function evaluationArgs(argv: string[]): EvaluationBenchOptions {
  const opts: EvaluationBenchOptions = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--engine') opts.engine = argv[++i] === 'postgres' ? 'postgres' : 'pglite';
    else if (argv[i] === '--samples') opts.samples = (argv[++i] ?? '').split(',');
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchEvaluations(evaluationArgs(process.argv.slice(2))));
}
