import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  DeletedEvaluation,
  Evaluation,
  EvaluationSummary,
  PageParams,
  RunEvaluationParams,
} from '../types.js';
import { bankPath, seg } from './paths.js';

/**
 * An evaluation runs one Recall per case on the server, one after another: 1,000 cases can take
 * minutes, so `run` waits this long per attempt unless the call says otherwise.
 */
const RUN_TIMEOUT_MS = 15 * 60_000;

/**
 * Recall evaluations of a bank: queries with the memories they should find, scored as recall@k
 * and MRR (overall and per retrieval channel), kept per bank. Running and reading need `recall`;
 * deleting needs `admin`.
 */
export class EvaluationsResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** Runs the cases (or, with `from`, a past run's cases again) and keeps the run. */
  run(bank: string, params: RunEvaluationParams, options?: RequestOptions): Promise<Evaluation> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/evaluations'), {
      body: params,
      options: { timeout: RUN_TIMEOUT_MS, ...options },
    });
  }

  /** The bank's runs, newest first, without their cases: `await` for one page, `for await` for all. */
  list(bank: string, params: PageParams = {}, options?: RequestOptions): PagedList<EvaluationSummary> {
    const { cursor, ...rest } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<EvaluationSummary>>('GET', bankPath(this.prefix, bank, '/evaluations'), {
          query: { ...rest, cursor: c },
          options,
        }),
      cursor,
    );
  }

  /** One run with its cases. */
  get(bank: string, id: string, options?: RequestOptions): Promise<Evaluation> {
    return this.t.request('GET', bankPath(this.prefix, bank, `/evaluations/${seg(id)}`), { options });
  }

  delete(bank: string, id: string, options?: RequestOptions): Promise<DeletedEvaluation> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/evaluations/${seg(id)}`), { options });
  }
}
