import { randomUUID } from 'node:crypto';
import { LlmError } from '../llm/errors.js';
import type { LanguageModel } from '../llm/model.js';
import type { LlmCallRecord, LlmRequestStore } from '../store/store.js';
import type { Deps, Services } from './services.js';

/**
 * How many of a bank's model calls are kept: the newest 10,000 (about 1 MB). A bank's log is
 * bounded whatever its traffic, every listing and count over it too, and pruning is a range
 * delete in the statement that records the calls.
 */
export const LLM_REQUESTS_KEPT = 10_000;

/** What a model call served. */
export type LlmOperation = 'retain' | 'reflect' | 'consolidation' | 'probe';

/**
 * The model calls of one unit of work (a Retain, a Reflect, a consolidation slice) for one bank.
 * Calls are held in memory and written by `settle`, with their tokens added to the bank's usage,
 * in one statement: recording costs no round trip per call. Prompts and answers are never kept.
 */
export class LlmLedger {
  private pending: LlmCallRecord[] = [];
  /** Groups the calls of this unit of work (Hindsight's `trace_id`). */
  readonly traceId = randomUUID();

  constructor(
    private readonly s: Deps<LlmRequestStore, 'now'>,
    private readonly projectId: string,
    private readonly bankId: string,
    private readonly operation: LlmOperation,
  ) {}

  /** The services with each call of their model recorded under `scope`. */
  services<D extends Pick<Services, 'llm'>>(s: D, scope: string): D {
    return s.llm ? { ...s, llm: this.model(s.llm, scope) } : s;
  }

  /** The model with each call recorded (timed around the provider's answer alone). */
  model(llm: LanguageModel, scope: string): LanguageModel {
    const record = (started: Date, t0: number, fields: Partial<LlmCallRecord>) =>
      this.pending.push({
        started_at: started,
        operation: this.operation,
        scope,
        provider: llm.provider,
        model: llm.model,
        status: 'success',
        error: null,
        duration_ms: Math.round(performance.now() - t0),
        input_tokens: 0,
        output_tokens: 0,
        trace_id: this.traceId,
        ...fields,
      });
    return {
      provider: llm.provider,
      model: llm.model,
      complete: async (request) => {
        const started = this.s.now();
        const t0 = performance.now();
        try {
          const res = await llm.complete(request);
          record(started, t0, {
            model: res.model || llm.model,
            input_tokens: res.usage.inputTokens,
            output_tokens: res.usage.outputTokens,
          });
          return res;
        } catch (err) {
          record(started, t0, { status: 'error', error: errorCode(err) });
          throw err;
        }
      },
    };
  }

  /** Writes the calls recorded since the last settle (nothing when there are none). */
  async settle(): Promise<void> {
    const calls = this.pending;
    if (calls.length === 0) return;
    this.pending = [];
    await this.s.store.recordLlmCalls(this.projectId, this.bankId, calls, LLM_REQUESTS_KEPT);
  }
}

/** A stable code for a failed call: the provider error's kind, never its message. */
function errorCode(err: unknown): string {
  if (err instanceof LlmError) return err.kind;
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) return 'aborted';
  return 'error';
}
