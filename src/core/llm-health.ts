import { LlmError } from '../llm/errors.js';
import { requireBank } from './banks.js';
import { meteredModel } from './budgets.js';
import { LlmLedger } from './llm-ledger.js';
import type { Deps } from './services.js';
import type { BankStore, LimitStore, LlmRequestStore } from '../store/store.js';

export type LlmProbeStatus = 'connected' | 'not_configured' | 'auth_failed' | 'unreachable' | 'timeout';

/** The operations that call a language model; in mnemo all three use the server's one model. */
const OPERATIONS = ['retain', 'consolidation', 'reflect'] as const;

/**
 * Probes the language model a bank's Retain, consolidation and Reflect would use with one
 * minimal call (they share the server's model, so it is called once), and says only whether it
 * answered: never the provider, model, address, key or the provider's message. The call is
 * metered against the project's budgets and counted in the bank's usage.
 */
export async function probeBankLlm(
  s: Deps<BankStore & LimitStore & LlmRequestStore, 'limitDefaults' | 'llm' | 'now'>,
  projectId: string,
  bankId: string,
) {
  await requireBank(s, projectId, bankId);
  const ledger = new LlmLedger(s, projectId, bankId, 'probe');
  const model = meteredModel(ledger.services(s, 'health'), projectId, 'request');
  let status: LlmProbeStatus = 'not_configured';
  let latency: number | null = null;
  if (model) {
    const started = performance.now();
    try {
      await model.complete({
        messages: [{ role: 'user', content: 'ping' }],
        maxTokens: 1,
        temperature: 0,
      });
      status = 'connected';
    } catch (err) {
      // A budget's refusal (an AppError) is the caller's to see, not the model's state.
      if (!(err instanceof LlmError)) throw err;
      status =
        err.kind === 'timeout'
          ? 'timeout'
          : err.status === 401 || err.status === 403
            ? 'auth_failed'
            : 'unreachable';
    }
    latency = Math.round(performance.now() - started);
    await ledger.settle();
  }
  return {
    bank_id: bankId,
    operations: OPERATIONS.map((operation) => ({
      operation,
      ok: status === 'connected',
      status,
      latency_ms: latency,
    })),
  };
}
